// The report's content and order: the summary and gates first, then each
// section the evidence holds, the audit coverage and the notes. The blocks and
// text helpers are in report-blocks.ts; the host sections in
// report-fleet-sections.ts, the activity sections in report-activity-sections.ts.
import type { AuditCoverage, Evidence, Gate } from '../../../src-preload/contract/index.js';
import { chainHow } from './audit-text.js';
import { gateCounts } from './gates.js';
import { alertsSection, benchmarksSection, costSection, decisionCounts, lifecycleSection } from './report-activity-sections.js';
import { badge, code, dash, duration, isoUtc, orDash, stat, strong, type Block, type Cell, type DocSection, type Inline, type ReportDocument } from './report-blocks.js';
import { chartsSection, healthSection, inventorySection, securitySection } from './report-fleet-sections.js';
import { hostStateSection, logExcerptsSection } from './report-host-sections.js';

export { cleanText, STATUS_WORD, type Block, type Cell, type DocSection, type Inline, type ReportDocument, type SectionId, type TableColumn } from './report-blocks.js';

function summarySection(e: Evidence): DocSection {
  const blocks: Block[] = [];
  if (e.gates === null) blocks.push({ kind: 'p', content: ['Gates were not part of this report.'] });
  else {
    const c = gateCounts(e.gates);
    blocks.push({
      kind: 'p',
      content: [
        strong(`Gates (${e.gates.length}):`),
        ' ',
        badge('pass'),
        ` ${c.pass} · `,
        badge('fail'),
        ` ${c.fail} · `,
        badge('pending'),
        ` ${c.pending} · `,
        badge('unverified'),
        ` ${c.unverified}`,
      ],
    });
  }
  const facts: Inline[][] = [];
  if (e.security !== null) {
    const checks = e.security.flatMap((h) => h.checks);
    const n = (v: string) => checks.filter((c) => c.verdict === v).length;
    facts.push([`Security checks: ${stat(checks.length, 'in all')} — ${n('pass')} pass, ${n('fail')} fail, ${n('unverified')} unverified.`]);
  }
  if (e.benchmarks !== null) facts.push([`Benchmark runs in the window: ${e.benchmarks.length}.`]);
  if (e.lifecycle !== null) {
    const l = e.lifecycle;
    facts.push([
      l.proposed === 0
        ? 'Lifecycle actions: none proposed in the window.'
        : `Lifecycle actions: ${l.proposed} proposed — ${decisionCounts(l)}; ${l.verified} verified, ${l.failed} failed.`,
    ]);
  }
  if (e.alerts !== null) facts.push([`Alerts raised in the window: ${e.alerts.filter((a) => a.event === 'raised').length}.`]);
  facts.push(
    e.audit.chainVerified
      ? [`Audit chain: verified${chainHow(e.audit)}.`]
      : [strong('Audit chain: NOT verified'), ` — ${e.audit.chainProblem ?? 'no reason given'}.`],
  );
  if (e.notes.length) facts.push([`${e.notes.length} ${e.notes.length === 1 ? 'note limits' : 'notes limit'} this report (see Notes).`]);
  blocks.push({ kind: 'list', items: facts });
  const skipped = (
    [
      ['gates', e.gates],
      ['inventory', e.inventory],
      ['security', e.security],
      ['health', e.health],
      ['benchmarks', e.benchmarks ?? e.trafficEvaluation],
      ['cost', e.cost],
      ['lifecycle', e.lifecycle],
      ['alerts', e.alerts],
    ] as const
  )
    .filter(([, v]) => v === null)
    .map(([k]) => k);
  if (skipped.length) blocks.push({ kind: 'p', content: [`Sections not included: ${skipped.join(', ')}.`] });
  return { id: 'summary', title: 'Summary', pageBreak: false, blocks };
}

function gatesSection(gates: readonly Gate[]): DocSection {
  const rows = gates.map((g): Cell[] => [
    [badge(g.status)],
    [g.label, '\n', code(g.id)],
    [g.kind],
    [orDash(g.evidence)],
    [orDash(g.note)],
    g.markedBy !== null || g.markedAt !== null ? [orDash(g.markedBy), '\n', isoUtc(g.markedAt)] : [dash],
  ]);
  return {
    id: 'gates',
    title: 'Gates',
    pageBreak: false,
    blocks: gates.length
      ? [
          {
            kind: 'p',
            content: ['Auto gates are computed from this evidence (pass, fail, or unverified when it could not be measured); manual gates are marked by an operator (pass, fail, pending).'],
          },
          { kind: 'table', columns: [{ label: 'Status' }, { label: 'Gate' }, { label: 'Kind' }, { label: 'Evidence' }, { label: 'Note' }, { label: 'Marked by' }], rows },
        ]
      : [{ kind: 'p', content: ['No gates are defined.'] }],
  };
}

function auditSection(a: AuditCoverage): DocSection {
  const range = a.fromSeq === null || a.toSeq === null ? 'no audit rows in the window' : `seq ${a.fromSeq} to ${a.toSeq}`;
  return {
    id: 'audit',
    title: 'Audit coverage',
    pageBreak: false,
    blocks: [
      {
        kind: 'table',
        columns: [{ label: 'Fact' }, { label: 'Value' }],
        rows: [
          [['Audit rows in the window'], [range]],
          [['Chain head'], [a.headSeq === null ? 'empty log' : `seq ${a.headSeq}`]],
          [['Head hash'], a.headHash === null ? [dash] : [code(a.headHash)]],
          [['Chain verified'], a.chainVerified ? [badge('pass'), ` — every row up to the head hashes to the head hash${chainHow(a)}`] : [badge('fail'), ' — ', orDash(a.chainProblem)]],
        ],
      },
    ],
  };
}

function notesSection(notes: readonly string[]): DocSection {
  return {
    id: 'notes',
    title: 'Notes',
    pageBreak: false,
    blocks: notes.length ? [{ kind: 'list', items: notes.map((n) => [n]) }] : [{ kind: 'p', content: ['None.'] }],
  };
}

export function buildReportDocument(e: Evidence, opts: { evidenceSha256: string }): ReportDocument {
  const header: Inline[][] = [
    [strong('Generated'), ` ${isoUtc(e.generatedAt)} by ${e.generatedBy}`],
    [strong('Window'), ` ${isoUtc(e.window.fromMs)} to ${isoUtc(e.window.toMs)} (${duration(e.window.toMs - e.window.fromMs)})`],
    [strong('Hosts'), ` ${e.hosts.length ? e.hosts.join(', ') : 'none'}`],
    [strong('Console'), ` ${e.console.version}, ${e.console.mode}`],
  ];
  const banner: Inline[] | null = e.console.demo ? [strong('Demo fleet:'), ' this evidence comes from the simulated demo fleet, not from real hosts.'] : null;
  const sections: DocSection[] = [summarySection(e)];
  if (e.gates !== null) sections.push(gatesSection(e.gates));
  if (e.inventory !== null) sections.push(inventorySection(e.inventory));
  if (e.security !== null) sections.push(securitySection(e.security));
  if (e.health !== null) sections.push(healthSection(e.health));
  if (e.hostState !== null) sections.push(hostStateSection(e.hostState));
  if (e.charts.length) sections.push(chartsSection(e.charts));
  if (e.benchmarks !== null || e.trafficEvaluation !== null) sections.push(benchmarksSection(e.benchmarks, e.trafficEvaluation));
  if (e.cost !== null) sections.push(costSection(e.cost));
  if (e.lifecycle !== null) sections.push(lifecycleSection(e.lifecycle));
  if (e.alerts !== null) sections.push(alertsSection(e.alerts, e.alertHistory));
  if (e.logExcerpts !== null) sections.push(logExcerptsSection(e.logExcerpts));
  sections.push(auditSection(e.audit), notesSection(e.notes));
  const footer: Inline[][] = [
    ['Evidence id ', code(e.id), ' · schema ', code(e.schema), ' · evidence SHA-256 ', code(opts.evidenceSha256)],
    ['The digests of every file are in manifest.json.'],
  ];
  return { title: e.title, header, banner, sections, footer };
}
