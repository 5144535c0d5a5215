// Watches services' logs for known failure lines (classify.ts) so an alert can
// quote them. Cheap by design: no follow channel is held open per service
// (a follow costs an SSH channel and a stream of every line for the whole
// life of the console); instead, once per interval (default 30 s), and at
// once when a service's health changes, one bounded tail per service reads
// what was written since the last line it saw. It is driven by the fleet's
// poll rounds (no timer of its own), skips hosts that are not connected, never
// runs two reads of one service at once, and backs off after a failed read.
// Only classifier-flagged lines and a few around them leave it, in an event;
// nothing is stored.
import type { AlertContextLine, LogEntry, LogFailureKind, LogLine } from '../../../src-preload/contract/index.js';
import { ALERT_CONTEXT_MAX_CHARS, ALERT_CONTEXT_MAX_LINES } from '../../../src-preload/contract/index.js';
import { backoffDelayMs, DisposableStore, Emitter, toAppError, type Clock, type Disposable, type Logger } from '../base/index.js';
import type { Config } from '../config/index.js';
import { upstreamKey } from '../upstream/index.js';
import { hasTimestamps, logSourceOf } from './sources.js';

/** What one read found: the flagged lines' kinds and count, and the lines as an alert's context (masked, bounded). */
export interface LogFailureFound {
  readonly host: string;
  readonly serviceId: string;
  readonly matched: number;
  readonly kinds: readonly LogFailureKind[];
  readonly context: readonly AlertContextLine[];
}

/** What the watcher reads of one poll round (the fleet's FleetState satisfies it). */
export interface LogWatchRound {
  readonly hosts: readonly {
    readonly label: string;
    readonly session: { readonly state: string };
    readonly services: readonly { readonly id: string; readonly health: string }[];
  }[];
}

export interface LogWatchOptions {
  /** The logs service's tail (lines already masked and classified). */
  logs: { tail(label: string, serviceId: string, options: { lines: number; sinceMs?: number; signal?: AbortSignal }): Promise<{ entries: LogEntry[] }> };
  fleet: { onDidRound(listener: (state: LogWatchRound) => void): Disposable };
  config: { readonly current: Config };
  clock: Clock;
  logger: Logger;
  /** Lines one read asks for; default 300. */
  maxLines?: number;
  /** Lines kept before and after a flagged line; default 3. */
  contextLines?: number;
  /** Default 30 s; config's alerts.logWatchIntervalMs wins. */
  intervalMs?: number;
}

const DEFAULT_INTERVAL_MS = 30_000;
const MAX_BACKOFF_MS = 10 * 60_000;
/** Texts remembered from the end of the last read of a source without timestamps, to find where the new lines start. */
const OVERLAP_LINES = 8;

interface Watched {
  /** When the watcher first saw the service: a timestamped source is read from here until it shows a line. */
  startMs: number;
  nextDueMs: number;
  inFlight: boolean;
  failures: number;
  health: string | null;
  /** Timestamped sources: the newest line's time, and the texts seen at exactly that time (since= is inclusive). */
  lastTs: number | null;
  textsAtLastTs: Set<string>;
  /** Sources without timestamps: the last texts of the last read; null before the first read. */
  tailTexts: string[] | null;
}

export class LogWatch implements Disposable {
  private readonly emitter = new Emitter<LogFailureFound>();
  readonly onDidFindFailure = this.emitter.on.bind(this.emitter);
  private readonly watched = new Map<string, Watched>();
  private readonly disposables = new DisposableStore();
  private readonly aborts = new Set<AbortController>();
  private disposed = false;

  constructor(private readonly options: LogWatchOptions) {
    this.disposables.add(options.fleet.onDidRound((state) => this.onRound(state)));
  }

  /** Reads in flight now (tests, the bench). */
  get inFlight(): number {
    return [...this.watched.values()].filter((w) => w.inFlight).length;
  }

  private get intervalMs(): number {
    return this.options.config.current.alerts?.logWatchIntervalMs ?? this.options.intervalMs ?? DEFAULT_INTERVAL_MS;
  }

  private onRound(state: LogWatchRound): void {
    const interval = this.intervalMs;
    if (interval === 0 || this.disposed) return;
    const now = this.options.clock.now();
    for (const host of state.hosts) {
      const cfg = this.options.config.current.hosts.find((h) => h.label === host.label);
      for (const s of host.services) {
        const svc = cfg?.services.find((c) => c.id === s.id);
        if (!svc || svc.logWatch === false || logSourceOf(svc) === null) continue;
        const key = upstreamKey(host.label, s.id);
        let w = this.watched.get(key);
        if (w === undefined) {
          // Spread the first reads over the interval: a fleet's services are not all read in one round.
          w = { startMs: now, nextDueMs: now + ((this.watched.size * 997) % interval), inFlight: false, failures: 0, health: s.health, lastTs: null, textsAtLastTs: new Set(), tailTexts: null };
          this.watched.set(key, w);
        }
        // A service whose health just changed (it went down, or a restart or wake moved it) says why in its
        // log: read it now, not in up to an interval. The fleet has no event for a lifecycle action's end,
        // but every action that touches a server changes its health. After a failed read the backoff stands.
        if (w.health !== null && s.health !== w.health && s.health !== 'unknown' && w.failures === 0) w.nextDueMs = now;
        w.health = s.health;
        if (host.session.state !== 'connected' || w.inFlight || now < w.nextDueMs) continue;
        this.read(host.label, s.id, w, now, hasTimestamps(logSourceOf(svc)!));
      }
    }
  }

  private read(label: string, serviceId: string, w: Watched, now: number, timestamped: boolean): void {
    w.inFlight = true;
    const abort = new AbortController();
    this.aborts.add(abort);
    const maxLines = this.options.maxLines ?? 300;
    // Failures from before the console watched are history, not news; after that the newest line seen is the cursor.
    const sinceMs = timestamped ? (w.lastTs ?? w.startMs) : undefined;
    this.options.logs
      .tail(label, serviceId, { lines: maxLines, ...(sinceMs !== undefined ? { sinceMs } : {}), signal: abort.signal })
      .then(
        ({ entries }) => {
          w.failures = 0;
          w.nextDueMs = this.options.clock.now() + this.intervalMs;
          const fresh = timestamped ? newSince(w, entries) : newAfterOverlap(w, entries);
          const found = this.findings(label, serviceId, fresh);
          if (found !== null && !this.disposed) this.emitter.fire(found);
        },
        (err: unknown) => {
          const e = toAppError(err);
          w.failures++;
          w.nextDueMs = this.options.clock.now() + backoffDelayMs(w.failures, { initialMs: this.intervalMs, maxMs: Math.max(MAX_BACKOFF_MS, this.intervalMs) });
          if (!this.disposed) this.options.logger.debug('log watch read failed', { key: upstreamKey(label, serviceId), code: e.code, failures: w.failures });
        },
      )
      .finally(() => {
        w.inFlight = false;
        this.aborts.delete(abort);
      });
  }

  private findings(host: string, serviceId: string, lines: readonly LogLine[]): LogFailureFound | null {
    const flagged = lines.map((l, i) => (l.failure !== null ? i : -1)).filter((i) => i >= 0);
    if (flagged.length === 0) return null;
    const around = this.options.contextLines ?? 3;
    const keep = new Set<number>();
    for (const i of flagged) for (let j = Math.max(0, i - around); j <= Math.min(lines.length - 1, i + around); j++) keep.add(j);
    // Bounded: the first lines of the failure (an OOM's cause) matter more than its hundredth repeat.
    const context = [...keep]
      .sort((a, b) => a - b)
      .slice(0, ALERT_CONTEXT_MAX_LINES)
      .map((i) => {
        const l = lines[i]!;
        const text = l.text.length > ALERT_CONTEXT_MAX_CHARS ? `${l.text.slice(0, ALERT_CONTEXT_MAX_CHARS)}…` : l.text;
        return { text, ts: l.ts, failure: l.failure };
      });
    const kinds = [...new Set(flagged.map((i) => lines[i]!.failure!))];
    return { host, serviceId, matched: flagged.length, kinds, context };
  }

  dispose(): Promise<void> {
    this.disposed = true;
    for (const a of this.aborts) a.abort();
    this.aborts.clear();
    this.emitter.dispose();
    return this.disposables.dispose();
  }
}

const linesOf = (entries: readonly LogEntry[]): LogLine[] => entries.filter((e): e is LogLine => e.type === 'line' && !e.binary);

/** Lines after the cursor; `since` is inclusive (and whole seconds for journalctl), so lines at or before it seen already are left out. */
function newSince(w: Watched, entries: readonly LogEntry[]): LogLine[] {
  const out: LogLine[] = [];
  for (const l of linesOf(entries)) {
    if (l.ts === null) continue;
    if (w.lastTs !== null && (l.ts < w.lastTs || (l.ts === w.lastTs && w.textsAtLastTs.has(l.text)))) continue;
    if (w.lastTs === null || l.ts > w.lastTs) {
      w.lastTs = l.ts;
      w.textsAtLastTs = new Set();
    }
    w.textsAtLastTs.add(l.text);
    out.push(l);
  }
  return out;
}

/**
 * A source without timestamps (a file, a command without {since}) can only be
 * asked for its last N lines: the new ones start after the last run of lines
 * the previous read ended with. Not found (more than N lines written, or the
 * file rotated): all N are new. The first read only sets the mark.
 */
function newAfterOverlap(w: Watched, entries: readonly LogEntry[]): LogLine[] {
  const lines = linesOf(entries);
  const texts = lines.map((l) => l.text);
  const before = w.tailTexts;
  w.tailTexts = texts.slice(-OVERLAP_LINES);
  if (before === null) return [];
  if (before.length === 0) return lines;
  for (let end = texts.length; end >= before.length; end--) {
    if (before.every((t, i) => texts[end - before.length + i] === t)) return lines.slice(end);
  }
  return lines;
}
