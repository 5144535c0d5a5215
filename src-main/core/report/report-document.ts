import type {
  AuditCoverage,
  Evaluation,
  Evidence,
  EvidenceAction,
  EvidenceChart,
  EvidenceRun,
  Estimate,
  Figure,
  Gate,
  GateStatus,
  LevelResult,
} from '../../../src-preload/contract/index.js';
import { gateCounts } from './gates.js';

// The report's content and order, independent of the output format: the
// Markdown and HTML renderers both serialize this one document, so the two
// cannot drift apart, and each serializer escapes every text run in one place.
// Everything here is plain text; no string in the document carries markup.

/** A run of inline content. Plain strings are untrusted text (escaped by the serializer; newlines become line breaks). */
export type Inline =
  | string
  | { t: 'badge'; status: GateStatus }
  | { t: 'code'; text: string }
  | { t: 'strong'; text: string };

export type Cell = Inline[];

export interface TableColumn {
  label: string;
  align?: 'right';
}

export type Block =
  | { kind: 'heading'; text: Inline[] }
  | { kind: 'p'; content: Inline[] }
  | { kind: 'list'; items: Inline[][] }
  | { kind: 'table'; columns: TableColumn[]; rows: Cell[][] }
  | { kind: 'chart'; chart: EvidenceChart; caption: string; alt: string };

export type SectionId =
  | 'summary'
  | 'gates'
  | 'inventory'
  | 'security'
  | 'health'
  | 'charts'
  | 'benchmarks'
  | 'cost'
  | 'lifecycle'
  | 'alerts'
  | 'audit'
  | 'notes';

export interface DocSection {
  id: SectionId;
  title: string;
  /** Starts a new page when printed. */
  pageBreak: boolean;
  blocks: Block[];
}

export interface ReportDocument {
  title: string;
  /** Facts under the title: when, by whom, which window and hosts. */
  header: Inline[][];
  /** A warning shown under the facts (evidence from the demo fleet); null when none. */
  banner: Inline[] | null;
  sections: DocSection[];
  footer: Inline[][];
}

// ── formatting ────────────────────────────────────────────────────────────

// C0/C1 controls and bidirectional overrides could hide or reorder what an
// auditor reads; they become U+FFFD. Line ends are normalized to \n.
// eslint-disable-next-line no-control-regex
const UNSAFE_CHARS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** Untrusted text made safe to show: normalized line ends, tabs as spaces, control and bidi characters replaced. */
export function cleanText(s: string): string {
  return s.replace(/\r\n?/g, '\n').replace(/\t/g, ' ').replace(UNSAFE_CHARS, '\uFFFD');
}

/** ISO 8601 UTC to the second (`2025-06-02T08:00:00Z`); "n/a" when not known. */
export function isoUtc(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return 'n/a';
  const d = new Date(ms);
  if (Number.isNaN(d.getTime())) return 'n/a';
  return d.toISOString().replace(/\.000Z$/, 'Z');
}

export function num(v: number | null | undefined, digits = 0): string {
  if (v === null || v === undefined || !Number.isFinite(v)) return 'n/a';
  return v.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** Up to `max` decimals, trailing zeros dropped (prices are shown as configured). */
function numUpTo(v: number, max: number): string {
  return v.toLocaleString('en-US', { minimumFractionDigits: 0, maximumFractionDigits: max });
}

/** Milliseconds as seconds with 3 decimals (the field-notes benchmark tables). */
function seconds(ms: number | null): string {
  return ms === null ? 'n/a' : `${num(ms / 1000, 3)} s`;
}

export function duration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return 'n/a';
  const s = Math.round(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  if (h > 0) return `${h} h ${m} min`;
  if (m > 0) return sec > 0 ? `${m} min ${sec} s` : `${m} min`;
  return `${sec} s`;
}

export const STATUS_WORD: Record<GateStatus, string> = { pass: 'PASS', fail: 'FAIL', unverified: 'UNVERIFIED', pending: 'PENDING' };

const badge = (status: GateStatus): Inline => ({ t: 'badge', status });
const code = (text: string): Inline => ({ t: 'code', text });
const strong = (text: string): Inline => ({ t: 'strong', text });
const dash = '—';
const orDash = (s: string | null | undefined): string => (s === null || s === undefined || s.trim() === '' ? dash : s);

function digitsFor(unit: string, v: number): number {
  if (unit === 'USD') return Math.abs(v) < 0.1 ? 5 : 2;
  if (unit === 'USD/h') return 6;
  if (unit === 'ms' || unit === 'MiB' || unit === 'tok') return 0;
  return 2;
}

/** `≈ 5.28 USD (estimate)` or `unavailable (estimate): no price configured`. */
export function estimateText(e: Estimate): string {
  if (e.value === null) return `unavailable (estimate): ${e.unavailableReason ?? 'not computable'}`;
  return `≈ ${num(e.value, digitsFor(e.unit, e.value))} ${e.unit} (estimate)`;
}

export function figureValue(f: Figure): string {
  if (f.value === null) return `unavailable: ${f.unavailableReason ?? 'not computable'}`;
  const flags = [f.estimate ? 'estimate' : null, f.unstable ? 'unstable: fewer than 20 samples' : null].filter((x) => x !== null);
  const v = `${num(f.value, digitsFor(f.unit, f.value))} ${f.unit}`;
  return flags.length ? `${f.estimate ? '≈ ' : ''}${v} (${flags.join('; ')})` : v;
}

function stat(value: number, label: string): string {
  return `${num(value)} ${label}`;
}

// ── summary chart data (also the alt text of each chart image) ───────────

export function chartDescription(chart: EvidenceChart): string {
  const kind = chart.kind === 'line' ? 'Line chart' : 'Bar chart';
  const where = chart.host ? ` on ${chart.host}` : '';
  const points = chart.x.length;
  let span = '';
  if (chart.kind === 'line' && points > 0) {
    const xs = chart.x.filter((v): v is number => typeof v === 'number');
    if (xs.length) span = ` from ${isoUtc(Math.min(...xs))} to ${isoUtc(Math.max(...xs))}`;
  }
  const series = chart.series.map((s) => {
    const vals = s.values.slice(0, points).filter((v): v is number => v !== null && Number.isFinite(v));
    const gaps = Math.max(0, points - vals.length);
    if (vals.length === 0) return `${s.name}: no data`;
    if (chart.kind === 'bar') return `${s.name}: ${chart.x.map((x, i) => `${String(x)} ${num(s.values[i] ?? null, 2)}`).join(', ')}`;
    const min = Math.min(...vals);
    const max = Math.max(...vals);
    return `${s.name}: ${num(min, 1)}–${num(max, 1)} ${chart.unit}${gaps ? `, ${gaps} missing` : ''}`;
  });
  return `${kind}: ${chart.title}${where} (${chart.unit}), ${points} ${chart.kind === 'line' ? 'points' : 'categories'}${span}. ${series.join('; ')}.`;
}

// ── sections ─────────────────────────────────────────────────────────────

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
      ? ['Audit chain: verified when the report was built.']
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

function inventorySection(hosts: NonNullable<Evidence['inventory']>): DocSection {
  const blocks: Block[] = [];
  if (!hosts.length) blocks.push({ kind: 'p', content: ['No hosts in the inventory.'] });
  for (const h of hosts) {
    blocks.push({ kind: 'heading', text: [h.label] });
    const facts: Cell[][] = [
      [['Address'], [h.address]],
      [['Jump host'], [orDash(h.jumpHost)]],
      [['SSH transport'], [orDash(h.sshTransport)]],
      [['Connection'], [h.connection]],
      [['Host key'], h.hostKeyFingerprint ? [code(h.hostKeyFingerprint)] : ['not recorded']],
      [['Price per hour'], [h.pricePerHourUsd === null ? 'not configured' : `${numUpTo(h.pricePerHourUsd, 6)} USD/h`]],
    ];
    if (h.liveError !== null) facts.push([['Live facts'], [strong('not read: '), h.liveError]]);
    blocks.push({ kind: 'table', columns: [{ label: 'Fact' }, { label: 'Value' }], rows: facts });
    if (h.gpus.length) {
      blocks.push({
        kind: 'table',
        columns: [{ label: 'GPU', align: 'right' }, { label: 'Name' }, { label: 'Memory', align: 'right' }, { label: 'Driver' }],
        rows: h.gpus.map((g) => [[String(g.index)], [g.name], [g.memoryTotalMiB === null ? 'n/a' : `${num(g.memoryTotalMiB)} MiB`], [orDash(g.driverVersion)]]),
      });
    } else blocks.push({ kind: 'p', content: [h.liveError ? 'GPUs: not read.' : 'GPUs: none reported.'] });
    if (h.services.length) {
      blocks.push({
        kind: 'table',
        columns: [
          { label: 'Service' },
          { label: 'Kind' },
          { label: 'Model' },
          { label: 'Aliases' },
          { label: 'Port', align: 'right' },
          { label: 'Slots', align: 'right' },
          { label: 'Server version' },
          { label: 'Served models (max context)' },
          { label: 'Health' },
        ],
        rows: h.services.map((s) => [
          [code(s.id)],
          [s.kind],
          [s.model],
          [s.aliases.length ? s.aliases.join(', ') : dash],
          [String(s.remotePort)],
          [String(s.slots)],
          [orDash(s.serverVersion)],
          [s.servedModels.length ? s.servedModels.map((m) => `${m.id} (${m.maxContext === null ? 'n/a' : num(m.maxContext)})`).join('\n') : 'not answered'],
          [s.health],
        ]),
      });
      for (const s of h.services) {
        const entries = Object.entries(s.config);
        if (!entries.length) continue;
        blocks.push({
          kind: 'p',
          content: [strong(`Config of ${s.id}:`), ' ', entries.map(([k, v]) => `${k} = ${typeof v === 'string' ? v : JSON.stringify(v)}`).join('; ')],
        });
      }
    } else blocks.push({ kind: 'p', content: ['Services: none configured.'] });
  }
  return { id: 'inventory', title: 'Inventory', pageBreak: true, blocks };
}

function securitySection(hosts: NonNullable<Evidence['security']>): DocSection {
  const blocks: Block[] = [];
  if (!hosts.length) blocks.push({ kind: 'p', content: ['No security checks were run.'] });
  for (const h of hosts) {
    blocks.push({ kind: 'heading', text: [h.host] });
    blocks.push(
      h.checks.length
        ? {
            kind: 'table',
            columns: [{ label: 'Verdict' }, { label: 'Check' }, { label: 'What was seen' }, { label: 'Measured at' }],
            rows: h.checks.map((c) => [[badge(c.verdict)], [c.label, '\n', code(c.id)], [orDash(c.evidence)], [c.at === null ? 'not measured' : isoUtc(c.at)]]),
          }
        : { kind: 'p', content: ['No checks for this host.'] },
    );
  }
  return { id: 'security', title: 'Security checks', pageBreak: false, blocks };
}

function healthSection(hosts: NonNullable<Evidence['health']>): DocSection {
  const blocks: Block[] = [];
  if (!hosts.length) return { id: 'health', title: 'Health', pageBreak: false, blocks: [{ kind: 'p', content: ['No hosts.'] }] };
  blocks.push({
    kind: 'p',
    content: ['Telemetry coverage: share of the window with fresh telemetry (10 s buckets holding data ÷ buckets in the window). Stale periods are gaps of 60 s or more.'],
  });
  blocks.push({
    kind: 'table',
    columns: [{ label: 'Host' }, { label: 'Telemetry coverage', align: 'right' }, { label: 'Stale periods', align: 'right' }, { label: 'Reconnects', align: 'right' }],
    rows: hosts.map((h) => [
      [h.host],
      [h.telemetryCoveragePct === null ? 'no samples' : `${num(h.telemetryCoveragePct, 1)} %`],
      [String(h.stalePeriods.length)],
      [String(h.reconnects)],
    ]),
  });
  const stale = hosts.flatMap((h) => h.stalePeriods.map((p) => ({ host: h.host, ...p })));
  if (stale.length) {
    blocks.push({ kind: 'heading', text: ['Stale periods'] });
    blocks.push({
      kind: 'table',
      columns: [{ label: 'Host' }, { label: 'From' }, { label: 'To' }, { label: 'Length', align: 'right' }, { label: 'Reason' }],
      rows: stale.sort((a, b) => a.fromMs - b.fromMs).map((p) => [[p.host], [isoUtc(p.fromMs)], [isoUtc(p.toMs)], [duration(p.toMs - p.fromMs)], [orDash(p.reason)]]),
    });
  }
  const events = hosts.flatMap((h) => h.connectionEvents.map((ev) => ({ host: h.host, ...ev })));
  if (events.length) {
    blocks.push({ kind: 'heading', text: ['Connection events'] });
    blocks.push({
      kind: 'table',
      columns: [{ label: 'Time' }, { label: 'Host' }, { label: 'Event' }, { label: 'Detail' }],
      rows: events.sort((a, b) => a.at - b.at).map((ev) => [[isoUtc(ev.at)], [ev.host], [ev.type], [orDash(ev.detail)]]),
    });
  }
  return { id: 'health', title: 'Health', pageBreak: false, blocks };
}

function chartsSection(charts: readonly EvidenceChart[]): DocSection {
  return {
    id: 'charts',
    title: 'Charts',
    pageBreak: true,
    blocks: [
      { kind: 'p', content: ['Times on the charts are UTC. A break in a line is a gap in the data, not a zero.'] },
      ...charts.map((chart): Block => ({ kind: 'chart', chart, caption: chart.host ? `${chart.title} — ${chart.host} (${chart.unit})` : `${chart.title} (${chart.unit})`, alt: chartDescription(chart) })),
    ],
  };
}

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

function benchmarksSection(runs: readonly EvidenceRun[] | null, traffic: Evaluation | null): DocSection {
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

function costSection(rows: NonNullable<Evidence['cost']>): DocSection {
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
function decisionCounts(l: NonNullable<Evidence['lifecycle']>): string {
  return `approved ${l.approved} · rejected ${l.rejected} · withdrawn ${l.withdrawn} · expired ${l.expired} · waiting ${l.pending}`;
}

function lifecycleSection(l: NonNullable<Evidence['lifecycle']>): DocSection {
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

function alertsSection(alerts: NonNullable<Evidence['alerts']>): DocSection {
  return {
    id: 'alerts',
    title: 'Alerts',
    pageBreak: false,
    blocks: alerts.length
      ? [
          {
            kind: 'table',
            columns: [{ label: 'Seq', align: 'right' }, { label: 'Time' }, { label: 'Event' }, { label: 'Severity' }, { label: 'Kind' }, { label: 'Target' }, { label: 'Message' }],
            rows: alerts.map((a) => [[String(a.seq)], [isoUtc(a.at)], [a.event], [a.severity], [a.kind], [orDash(a.target)], [orDash(a.message)]]),
          },
        ]
      : [{ kind: 'p', content: ['No alerts in the window.'] }],
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
          [['Chain verified'], a.chainVerified ? [badge('pass'), ' — every row up to the head hashes to the head hash'] : [badge('fail'), ' — ', orDash(a.chainProblem)]],
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
  if (e.charts.length) sections.push(chartsSection(e.charts));
  if (e.benchmarks !== null || e.trafficEvaluation !== null) sections.push(benchmarksSection(e.benchmarks, e.trafficEvaluation));
  if (e.cost !== null) sections.push(costSection(e.cost));
  if (e.lifecycle !== null) sections.push(lifecycleSection(e.lifecycle));
  if (e.alerts !== null) sections.push(alertsSection(e.alerts));
  sections.push(auditSection(e.audit), notesSection(e.notes));
  const footer: Inline[][] = [
    ['Evidence id ', code(e.id), ' · schema ', code(e.schema), ' · evidence SHA-256 ', code(opts.evidenceSha256)],
    ['The digests of every file are in manifest.json.'],
  ];
  return { title: e.title, header, banner, sections, footer };
}
