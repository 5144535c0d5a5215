// The log lines around each lifecycle action (issue #29 item 7), only when the
// operator ticked "include logs": read at export from the service's log source
// (the logs capability's tail, masked as every log line is) from a little
// before the action started, kept up to a little after it ended, bounded per
// action and in actions. A source that cannot start at a time says so in the
// report instead of lines.
import type { ActionView, EvidenceLogExcerpt, LogLine, LogSourceView } from '../../../src-preload/contract/index.js';
import { stopIfCancelled } from './errors.js';

/** What one read of a service's log gave: its lines from `sinceMs` on, oldest first, or why none. */
export interface ServiceLogRead {
  source: LogSourceView | null;
  lines: LogLine[];
  /** The read hit its own line bound: lines between `sinceMs` and the first line returned may be missing. */
  truncated: boolean;
  /** `CODE: message` when nothing could be read. */
  problem: string | null;
}

export type ServiceLogReader = (host: string, serviceId: string, sinceMs: number, signal?: AbortSignal) => Promise<ServiceLogRead>;

/** How far before an action's start and after its end the lines are taken. */
export const LOG_BEFORE_MS = 30_000;
export const LOG_AFTER_MS = 60_000;
export const MAX_LINES_PER_ACTION = 200;
/** Characters of one line kept in a report (the rest counted in cutBytes): 20 actions × 200 lines stay a few MB. */
export const MAX_LINE_CHARS = 1000;
/** Actions whose lines are read at most (the newest); the rest are named in a note. */
export const MAX_ACTIONS_WITH_LOGS = 20;

export async function logExcerpts(
  actions: readonly ActionView[],
  read: ServiceLogReader | undefined,
  generatedAt: number,
  notes: string[],
  signal?: AbortSignal,
): Promise<EvidenceLogExcerpt[]> {
  const ran = actions.filter((a) => a.startedAt !== null).sort((a, b) => b.startedAt! - a.startedAt!);
  if (ran.length === 0) {
    notes.push('Log lines were asked for, but no lifecycle action ran in the window.');
    return [];
  }
  if (!read) {
    notes.push('Log lines were asked for, but this console has no log reader: no lines are included.');
    return [];
  }
  const chosen = ran.slice(0, MAX_ACTIONS_WITH_LOGS);
  if (ran.length > chosen.length) notes.push(`Log lines are included for the newest ${chosen.length} of ${ran.length} lifecycle actions that ran in the window.`);
  const out: EvidenceLogExcerpt[] = [];
  // Oldest first in the report, as the actions are.
  for (const a of chosen.reverse()) {
    stopIfCancelled(signal);
    out.push(await excerptOf(a, read, generatedAt, notes, signal));
  }
  return out;
}

async function excerptOf(a: ActionView, read: ServiceLogReader, generatedAt: number, notes: string[], signal?: AbortSignal): Promise<EvidenceLogExcerpt> {
  const fromMs = a.startedAt! - LOG_BEFORE_MS;
  const toMs = Math.min(generatedAt, (a.finishedAt ?? generatedAt) + LOG_AFTER_MS);
  const base = { actionId: a.id, kind: a.kind, host: a.label, serviceId: a.serviceId, fromMs, toMs };
  const r = await read(a.label, a.serviceId, fromMs, signal);
  if (r.problem !== null) return { ...base, source: r.source, lines: [], omitted: 0, problem: r.problem };
  const inWindow = linesBetween(r.lines, fromMs, toMs);
  const first = r.lines.find((l) => l.ts !== null)?.ts ?? null;
  if (r.truncated && first !== null && first > fromMs) {
    notes.push(`${a.label}/${a.serviceId}: the log holds more lines since ${new Date(fromMs).toISOString()} than one read returns; lines of action ${a.id} before ${new Date(first).toISOString()} are not included.`);
  }
  return {
    ...base,
    source: r.source,
    lines: inWindow.slice(0, MAX_LINES_PER_ACTION).map(capLine),
    omitted: Math.max(0, inWindow.length - MAX_LINES_PER_ACTION),
    problem: null,
  };
}

function capLine(l: LogLine): LogLine {
  if (l.text.length <= MAX_LINE_CHARS) return l;
  const cut = l.text.slice(MAX_LINE_CHARS);
  return { ...l, text: l.text.slice(0, MAX_LINE_CHARS), cutBytes: l.cutBytes + Buffer.byteLength(cut) };
}

/** Lines stamped inside [fromMs, toMs]; an unstamped line goes with the stamped line before it. */
export function linesBetween(lines: readonly LogLine[], fromMs: number, toMs: number): LogLine[] {
  const kept: LogLine[] = [];
  let inside = false;
  for (const l of lines) {
    if (l.ts !== null) inside = l.ts >= fromMs && l.ts <= toMs;
    if (inside) kept.push(l);
  }
  return kept;
}
