// The report request form's state and its mapping to a `ReportRequest`: kept
// out of the components so the rules (window presets, custom datetime-local
// fields read in local time, at least one section) are unit-tested.
import { REPORT_SECTIONS, type ReportRequestInput, type ReportSection } from '../../../../src-preload/contract/index.js';

export type WindowPreset = '1h' | '8h' | '24h' | '7d' | 'custom';

export const WINDOW_PRESETS: ReadonlyArray<{ id: Exclude<WindowPreset, 'custom'>; label: string; ms: number }> = [
  { id: '1h', label: 'last 1 h', ms: 3_600_000 },
  { id: '8h', label: 'last 8 h (a shift)', ms: 8 * 3_600_000 },
  { id: '24h', label: 'last 24 h', ms: 24 * 3_600_000 },
  { id: '7d', label: 'last 7 d', ms: 7 * 24 * 3_600_000 },
];

export const SECTION_LABELS: Readonly<Record<ReportSection, string>> = {
  inventory: 'Inventory',
  security: 'Security checks',
  health: 'Health and telemetry',
  benchmarks: 'Benchmarks',
  cost: 'Cost',
  lifecycle: 'Lifecycle actions',
  alerts: 'Alerts',
  gates: 'Gates',
};

export interface ReportForm {
  title: string;
  /** Chosen host labels; none = every host. */
  hosts: string[];
  preset: WindowPreset;
  /** `datetime-local` values (local time, `YYYY-MM-DDTHH:mm`), used when preset is custom. */
  customFrom: string;
  customTo: string;
  sections: ReportSection[];
  /** Run the live checks over SSH (takes seconds), or report from the store only. */
  live: boolean;
  /** Add each service's log lines around the window's lifecycle actions (read over SSH at build time). */
  includeLogs: boolean;
}

export const DEFAULT_REPORT_FORM: ReportForm = {
  title: '',
  hosts: [],
  preset: '8h',
  customFrom: '',
  customTo: '',
  sections: [...REPORT_SECTIONS],
  live: true,
  includeLogs: false,
};

export const TITLE_MAX = 200;

export type RequestCheck = { ok: true; request: ReportRequestInput } | { ok: false; problems: string[] };

/** The request to send, or the problems to show, naming the field. */
export function requestFromForm(form: ReportForm, now: number): RequestCheck {
  const problems: string[] = [];
  const title = form.title.trim();
  if (title.length > TITLE_MAX) problems.push(`Title: at most ${TITLE_MAX} characters (${title.length} now).`);
  const window = windowFromForm(form, now);
  if ('problem' in window) problems.push(window.problem);
  if (form.sections.length === 0) problems.push('Sections: choose at least one.');
  if (problems.length > 0 || 'problem' in window) return { ok: false, problems };
  return {
    ok: true,
    request: {
      ...(title ? { title } : {}),
      hosts: [...form.hosts],
      fromMs: window.fromMs,
      toMs: window.toMs,
      sections: REPORT_SECTIONS.filter((s) => form.sections.includes(s)),
      live: form.live,
      // Log text reaches a report only when the operator ticks it.
      ...(form.includeLogs ? { includeLogs: true } : {}),
    },
  };
}

export function windowFromForm(form: ReportForm, now: number): { fromMs: number; toMs: number } | { problem: string } {
  if (form.preset !== 'custom') {
    const preset = WINDOW_PRESETS.find((p) => p.id === form.preset)!;
    return { fromMs: Math.max(0, now - preset.ms), toMs: now };
  }
  const fromMs = fromLocalInput(form.customFrom);
  const toMs = fromLocalInput(form.customTo);
  if (fromMs === null) return { problem: 'From: enter a date and time.' };
  if (toMs === null) return { problem: 'To: enter a date and time.' };
  if (fromMs >= toMs) return { problem: 'From must be before To.' };
  return { fromMs, toMs };
}

/** Switching to a custom window starts from the window the preset showed, so the operator only nudges it. */
export function withPreset(form: ReportForm, preset: WindowPreset, now: number): ReportForm {
  if (preset !== 'custom' || form.preset === 'custom') return { ...form, preset };
  const w = windowFromForm(form, now);
  if ('problem' in w) return { ...form, preset };
  return { ...form, preset, customFrom: toLocalInput(w.fromMs), customTo: toLocalInput(w.toMs) };
}

/** Adds or removes an item; sections keep the contract's order, hosts the order given. */
export function toggled<T>(list: readonly T[], item: T, on: boolean, order?: readonly T[]): T[] {
  const next = on ? (list.includes(item) ? [...list] : [...list, item]) : list.filter((x) => x !== item);
  return order ? order.filter((x) => next.includes(x)) : next;
}

/** ms epoch → `YYYY-MM-DDTHH:mm` in local time, the value a datetime-local input takes. */
export function toLocalInput(ms: number): string {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

/** A datetime-local value (minutes, optionally seconds) read in local time; null when empty or malformed. */
export function fromLocalInput(value: string): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?$/.exec(value.trim());
  if (!m) return null;
  const [y, mo, d, h, mi, s] = [m[1], m[2], m[3], m[4], m[5], m[6] ?? '0'].map(Number) as [number, number, number, number, number, number];
  const date = new Date(y, mo - 1, d, h, mi, s);
  // Reject dates that rolled over (2024-02-31 → March).
  if (date.getFullYear() !== y || date.getMonth() !== mo - 1 || date.getDate() !== d || date.getHours() !== h) return null;
  const ms = date.getTime();
  return Number.isFinite(ms) && ms >= 0 ? ms : null;
}

/**
 * What the automatic preview depends on: a change of this key (debounced)
 * refreshes it. Live checks and log lines take seconds and touch the hosts, so with either on
 * the preview runs only on the button.
 */
export function autoPreviewKey(form: ReportForm): string | null {
  // Live checks and log lines read the hosts over SSH: those previews run on the button only.
  if (form.live || form.includeLogs) return null;
  return JSON.stringify([form.title.trim(), form.hosts, form.preset, form.customFrom, form.customTo, form.sections]);
}
