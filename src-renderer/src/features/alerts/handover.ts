// A shift's handover as the page shows it and as an operator exports it:
// the window picker's choices, and the history as Markdown (the JSON export
// is the contract's object itself). Times in the UI's one format.
import type { AlertHistory } from '../../../../src-preload/contract/index.js';
import { formatDuration, formatTimestamp } from '../../format/format.js';
import { alertKindLabel, silenceScopeText } from '../host/alert-list-state.js';

export const SINCE_CHOICES = [
  { value: '4h', label: '4 h', ms: 4 * 3_600_000 },
  { value: '12h', label: '12 h', ms: 12 * 3_600_000 },
  { value: '24h', label: '24 h', ms: 24 * 3_600_000 },
  { value: '7d', label: '7 d', ms: 7 * 86_400_000 },
] as const;
export type SinceChoice = (typeof SINCE_CHOICES)[number]['value'];

export const sinceMs = (choice: SinceChoice): number => SINCE_CHOICES.find((c) => c.value === choice)!.ms;

/** Raise to clear, or "open" (never 0 for an alert that has not cleared). */
export const openFor = (durationMs: number | null): string => (durationMs === null ? 'open' : formatDuration(durationMs));

// A cell of a Markdown table: its pipes escaped and its lines joined, so outside text cannot break the table.
const cell = (text: string | null | undefined): string => (text ?? '—').replace(/\|/g, '\\|').replace(/[\r\n]+/g, ' ');

export function historyMarkdown(h: AlertHistory): string {
  const out = [`# Alert handover`, '', `From ${formatTimestamp(h.fromMs)} to ${formatTimestamp(h.toMs)}${h.truncated ? ' (cut at the limit)' : ''}.`, '', '## Alerts', ''];
  if (h.alerts.length === 0) out.push('None.');
  else {
    out.push('| raised | for | severity | alert | where | message | acknowledged by | silenced by | incident |', '|---|---|---|---|---|---|---|---|---|');
    for (const a of h.alerts) {
      const where = a.serviceId ? `${a.host}/${a.serviceId}` : a.host;
      out.push(`| ${formatTimestamp(a.raisedAt)} | ${openFor(a.durationMs)} | ${a.severity} | ${cell(alertKindLabel(a.kind))} | ${cell(where)} | ${cell(a.message)} | ${cell(a.ackBy)} | ${cell(a.silencedBy)} | ${cell(a.incident)} |`);
    }
  }
  out.push('', '## Changes', '');
  if (h.changes.length === 0) out.push('None.');
  else {
    out.push('| at | who | what | change |', '|---|---|---|---|');
    for (const c of h.changes) out.push(`| ${formatTimestamp(c.at)} | ${cell(c.actor)} | ${cell(c.target)} | ${cell(c.summary)} |`);
  }
  out.push('', '## Silences', '');
  if (h.silences.length === 0) out.push('None.');
  else {
    out.push('| id | scope | from | until | by | reason | ended |', '|---|---|---|---|---|---|---|');
    for (const s of h.silences) {
      const ended = s.endedAt === null ? '—' : `${formatTimestamp(s.endedAt)} by ${s.endedBy ?? '?'}`;
      out.push(`| ${cell(s.id)} | ${cell(silenceScopeText(s))} | ${formatTimestamp(s.createdAt)} | ${formatTimestamp(s.until)} | ${cell(s.by)} | ${cell(s.reason)} | ${cell(ended)} |`);
    }
  }
  return out.join('\n') + '\n';
}
