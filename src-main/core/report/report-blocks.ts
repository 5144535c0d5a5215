// The report's building blocks, independent of the output format (the
// Markdown and HTML renderers both serialize one ReportDocument, so the two
// cannot drift apart, and each serializer escapes every text run in one place),
// and how facts become plain text in them: numbers, times, estimates, charts.
// Everything here is plain text; no string in the document carries markup.
import type { EvidenceChart, Estimate, Figure, GateStatus } from '../../../src-preload/contract/index.js';

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
  | 'hoststate'
  | 'charts'
  | 'benchmarks'
  | 'cost'
  | 'lifecycle'
  | 'alerts'
  | 'logs'
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
export function numUpTo(v: number, max: number): string {
  return v.toLocaleString('en-US', { minimumFractionDigits: 0, maximumFractionDigits: max });
}

/** Milliseconds as seconds with 3 decimals (the field-notes benchmark tables). */
export function seconds(ms: number | null): string {
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

export const badge = (status: GateStatus): Inline => ({ t: 'badge', status });
export const code = (text: string): Inline => ({ t: 'code', text });
export const strong = (text: string): Inline => ({ t: 'strong', text });
export const dash = '—';
export const orDash = (s: string | null | undefined): string => (s === null || s === undefined || s.trim() === '' ? dash : s);

export function digitsFor(unit: string, v: number): number {
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

export function stat(value: number, label: string): string {
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
