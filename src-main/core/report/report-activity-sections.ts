// The report's sections about what ran and happened on the hosts:
// benchmark runs, cost, lifecycle changes and alerts.
import type { Evaluation, Evidence, EvidenceAction, EvidenceRun, Estimate, LevelResult } from '../../../src-preload/contract/index.js';
import { alertHistoryBlocks } from './report-alert-history.js';
import { isoUtc, num, numUpTo, seconds, duration, code, strong, dash, orDash, estimateText, figureValue, type Cell, type Block, type DocSection } from './report-blocks.js';

function workload(l: LevelResult): string {
  const base = l.phase === 'stability' ? `stability loop, c=${num(l.level, l.level % 1 ? 2 : 0)}` : `c=${num(l.level, l.level % 1 ? 2 : 0)}`;
  return l.partial ? `${base} (partial)` : base;
}

function levelRows(levels: readonly LevelResult[]): Cell[][] {
  return levels.map((l) => {
    const errs = Object.entries(l.errorsByCode).map(([k, v]) => `${k} × ${v}`);
    const outcome = `${l.completed} ok · ${l.failed} failed · ${l.cancelled} cancelled`;
    const checked = l.checked === null || l.checked === 0 ? 'not checked' : `${l.jsonParsed ?? 0} / ${l.schemaValid ?? 0} of ${l.checked}`;
    return [
      [workload(l)],
      [String(l.requests), '\n', outcome, ...(errs.length ? ['\n', errs.join(', ')] : []), ...(l.truncated ? ['\n', `${l.truncated} truncated`] : [])],
      [`${seconds(l.ttftP50Ms)} / ${seconds(l.ttftP95Ms)}`],
      [`${seconds(l.latencyP50Ms)} / ${seconds(l.latencyP95Ms)}`],
      [`${num(l.itlP50Ms, 1)} / ${num(l.itlP95Ms, 1)} ms`],
      [num(l.outputTokPerS, 2)],
      [num(l.requestsPerS, 3)],
      [checked],
    ];
  });
}

function evaluationBlocks(ev: Evaluation): Block[] {
  return [
    { kind: 'p', content: [`Source: ${ev.source}; ${isoUtc(ev.fromMs)} to ${isoUtc(ev.toMs)}. Figures marked estimate are cost estimates; unavailable figures say why.`] },
    {
      kind: 'table',
      columns: [{ label: 'Figure' }, { label: 'Value', align: 'right' }, { label: 'Samples', align: 'right' }, { label: 'Formula' }],
      rows: ev.figures.map((f) => [[f.label], [figureValue(f)], [num(f.samples)], [f.formula]]),
    },
  ];
}

function runBlocks(r: EvidenceRun): Block[] {
  const blocks: Block[] = [{ kind: 'heading', text: [r.name, r.baseline ? ' (baseline)' : ''] }];
  const finished = r.finishedAt === null ? 'not finished' : `${isoUtc(r.finishedAt)} (${duration(r.finishedAt - r.startedAt)})`;
  blocks.push({
    kind: 'table',
    columns: [{ label: 'Fact' }, { label: 'Value' }],
    rows: [
      [['Run'], [code(r.id), ` — ${r.state}, from ${r.source}`]],
      [['Model'], [orDash(r.model)]],
      [['Upstream'], [orDash(r.upstream), r.host ? ` on ${r.host}` : '']],
      [['Started'], [isoUtc(r.startedAt)]],
      [['Finished'], [finished]],
    ],
  });
  blocks.push(
    r.levels.length
      ? {
          kind: 'table',
          columns: [
            { label: 'Workload' },
            { label: 'Requests', align: 'right' },
            { label: 'TTFT p50 / p95', align: 'right' },
            { label: 'Latency p50 / p95', align: 'right' },
            { label: 'ITL p50 / p95', align: 'right' },
            { label: 'Output tok/s', align: 'right' },
            { label: 'Req/s', align: 'right' },
            { label: 'JSON / schema ok', align: 'right' },
          ],
          rows: levelRows(r.levels),
        }
      : { kind: 'p', content: ['No level finished.'] },
  );
  const p = r.peaks;
  // VRAM and GTT side by side: on an AMD APU the model lives in GTT and VRAM is only the carve-out.
  const mib = (v: number | null | undefined) => (v === null || v === undefined ? dash : `${num(v)} MiB`);
  const peaks = [
    `VRAM ${mib(p.vramMiB)}, GTT ${mib(p.gttMiB)}`,
    p.gpuUtilPct !== null ? `GPU utilisation ${num(p.gpuUtilPct)} %` : null,
    p.powerW !== null ? `power ${num(p.powerW)} W` : null,
    p.kvCachePct !== null ? `KV cache ${num(p.kvCachePct, 1)} %` : null,
  ].filter((x): x is string => x !== null);
  blocks.push({ kind: 'p', content: [p.samples > 0 && peaks.length ? `Peaks over ${p.samples} telemetry samples: ${peaks.join(', ')}.` : 'Peaks: no telemetry samples during the run.'] });
  blocks.push({ kind: 'p', content: [strong('Evaluation')] }, ...evaluationBlocks(r.evaluation));
  return blocks;
}

export function benchmarksSection(runs: readonly EvidenceRun[] | null, traffic: Evaluation | null): DocSection {
  const blocks: Block[] = [];
  if (runs !== null) {
    if (!runs.length) blocks.push({ kind: 'p', content: ['No benchmark runs in the window.'] });
    for (const r of runs) blocks.push(...runBlocks(r));
  }
  if (traffic !== null) blocks.push({ kind: 'heading', text: ['Proxy traffic evaluation'] }, ...evaluationBlocks(traffic));
  return { id: 'benchmarks', title: 'Benchmarks and evaluation', pageBreak: true, blocks };
}

type CostRow = NonNullable<Evidence['cost']>[number];

/** "2 h 10 min of 24 h (9.0 %)", "never observed (0 % of 24 h)", "the window has not started". */
function observedText(c: CostRow): string {
  if (c.windowSeconds <= 0 || c.coveragePct === null) return 'the window has not started';
  const of = duration(c.windowSeconds * 1000);
  if (c.observedSeconds <= 0) return `never observed (0 % of ${of})`;
  return `${duration(c.observedSeconds * 1000)} of ${of} (${num(c.coveragePct, 1)} %)`;
}

export function costSection(rows: NonNullable<Evidence['cost']>): DocSection {
  if (!rows.length) return { id: 'cost', title: 'Cost (estimates)', pageBreak: false, blocks: [{ kind: 'p', content: ['No hosts to cost.'] }] };
  const figures: Array<[string, (c: CostRow) => Estimate]> = [
    ['Price of the observed time', (c) => c.observedUsd],
    ['Per 1M output tokens, busy time', (c) => c.perMillionOutputUsageBased],
    ['Per 1M output tokens, observed time', (c) => c.perMillionOutputReservationBased],
  ];
  return {
    id: 'cost',
    title: 'Cost (estimates)',
    pageBreak: false,
    blocks: [
      {
        kind: 'p',
        content: [
          strong('Every cost figure here is an estimate'),
          " computed from the configured price per hour over the time the console observed each host within the window — the host view's figures for the same window. The basis column says how. Unavailable figures are not zero; an unknown token count is shown as —.",
        ],
      },
      {
        kind: 'table',
        columns: [{ label: 'Host' }, { label: 'Price per hour', align: 'right' }, { label: 'Observed in the window', align: 'right' }, { label: 'Output tokens', align: 'right' }, { label: 'Tokens from' }],
        rows: rows.map((c) => [
          [c.host],
          [c.pricePerHourUsd === null ? 'not configured' : `${numUpTo(c.pricePerHourUsd, 6)} USD/h`],
          [observedText(c)],
          [c.outputTokens === null ? dash : num(c.outputTokens)],
          [orDash(c.outputTokensBasis)],
        ]),
      },
      {
        kind: 'table',
        columns: [{ label: 'Host' }, { label: 'Figure' }, { label: 'Estimate', align: 'right' }, { label: 'Basis' }],
        rows: rows.flatMap((c) => figures.map(([label, pick]) => [[c.host], [label], [estimateText(pick(c))], [orDash(pick(c).basis)]])),
      },
    ],
  };
}

/** Who decided, in words that match the action's final state: approved by / rejected by … because … / withdrawn by / expired. */
function decisionCell(a: EvidenceAction): Cell {
  const at = a.decidedAt === null ? [] : ['\n', `at ${isoUtc(a.decidedAt)}`];
  const because = a.decisionReason ? ['\n', `because ${a.decisionReason}`] : [];
  switch (a.decision) {
    case 'approved':
      return ['approved by ', strong(a.approvedBy ?? 'an unrecorded person'), ...at];
    case 'rejected':
      return ['rejected by ', strong(a.rejectedBy ?? 'an unrecorded person'), ...at, ...because];
    case 'withdrawn':
      return ['withdrawn by ', strong(a.withdrawnBy ?? 'an unrecorded person'), ...at, ...because];
    case 'expired':
      return ['expired without a decision', ...at];
    default:
      return ['waiting for a decision'];
  }
}

function actionRow(a: EvidenceAction): Cell[] {
  const outcome: Cell = [strong(a.state)];
  if (a.finishedAt !== null) outcome.push('\n', `finished ${isoUtc(a.finishedAt)}`);
  if (a.error !== null) outcome.push('\n', 'error: ', a.error);
  return [
    [strong(a.kind), ' ', a.upstream, '\n', code(a.id)],
    [`by ${a.proposer}`, '\n', `at ${isoUtc(a.proposedAt)}`, '\n', `reason: ${orDash(a.reason)}`],
    decisionCell(a),
    outcome,
    [`${a.drained === null ? dash : a.drained} / ${a.aborted === null ? dash : a.aborted}`],
    [a.observed.length ? a.observed.join('\n') : dash],
  ];
}

/** The decision counts, in the order the done-criterion reads them: "approved 1 · rejected 1 · withdrawn 1". */
export function decisionCounts(l: NonNullable<Evidence['lifecycle']>): string {
  return `approved ${l.approved} · rejected ${l.rejected} · withdrawn ${l.withdrawn} · expired ${l.expired} · waiting ${l.pending}`;
}

export function lifecycleSection(l: NonNullable<Evidence['lifecycle']>): DocSection {
  return {
    id: 'lifecycle',
    title: 'Lifecycle actions',
    pageBreak: true,
    blocks: [
      {
        kind: 'p',
        content: [
          l.proposed === 0
            ? 'No lifecycle action was proposed in the window.'
            : `Proposed ${l.proposed} · ${decisionCounts(l)} · verified ${l.verified} · failed ${l.failed} · requests drained ${l.drained} · requests aborted ${l.aborted}.`,
        ],
      },
      l.actions.length
        ? {
            kind: 'table',
            columns: [{ label: 'Action' }, { label: 'Proposed' }, { label: 'Decision' }, { label: 'Outcome' }, { label: 'Drained / aborted', align: 'right' }, { label: 'Observed' }],
            rows: l.actions.map(actionRow),
          }
        : { kind: 'p', content: ['No lifecycle actions in the window.'] },
    ],
  };
}

export function alertsSection(alerts: NonNullable<Evidence['alerts']>, history: Evidence['alertHistory'] = null): DocSection {
  return {
    id: 'alerts',
    title: 'Alerts',
    pageBreak: false,
    // evidence/4 leads with the history a shift reads; the raw events follow (older evidence has them alone).
    blocks: history ? [...alertHistoryBlocks(history), { kind: 'heading', text: ['Alert events'] }, ...alertEventBlocks(alerts)] : alertEventBlocks(alerts),
  };
}

function alertEventBlocks(alerts: NonNullable<Evidence['alerts']>): Block[] {
  return alerts.length
    ? [
        {
          kind: 'table',
          columns: [{ label: 'Seq', align: 'right' }, { label: 'Time' }, { label: 'Event' }, { label: 'Severity' }, { label: 'Kind' }, { label: 'Target' }, { label: 'Message' }],
          rows: alerts.map((a) => [[String(a.seq)], [isoUtc(a.at)], [a.event], [a.severity], [a.kind], [orDash(a.target)], [orDash(a.message)]]),
        },
      ]
    : [{ kind: 'p', content: ['No alerts in the window.'] }];
}
