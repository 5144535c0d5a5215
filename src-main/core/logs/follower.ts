// One follower of a service's log: its filter, and its bounded queue. A
// follower that cannot keep up loses lines at the queue's bound, and the loss
// is counted and said in place ("dropped N lines"), never silent; markers
// (gaps, rotations, a lost link) have a little room of their own beyond it.
import type { LogEntry, LogFilter, LogMarker } from '../../../src-preload/contract/index.js';
import { AppError, Emitter, type Clock, type Disposable } from '../base/index.js';
import { LogsErrorCode } from './errors.js';

/** A line test built from the contract's filter; LOGS_FILTER_INVALID for a regex that does not compile. */
export function lineFilter(filter: LogFilter | undefined): (text: string) => boolean {
  if (!filter) return () => true;
  const ignoreCase = filter.ignoreCase ?? true;
  if (filter.regex) {
    let re: RegExp;
    try {
      re = new RegExp(filter.pattern, ignoreCase ? 'i' : '');
    } catch (err) {
      throw new AppError(LogsErrorCode.FILTER_INVALID, `the filter is not a valid regular expression: ${(err as Error).message}`, { details: { pattern: filter.pattern } });
    }
    return (text) => re.test(text);
  }
  const needle = ignoreCase ? filter.pattern.toLowerCase() : filter.pattern;
  return ignoreCase ? (text) => text.toLowerCase().includes(needle) : (text) => text.includes(needle);
}

/** Room for markers past the line bound, so a gap or a lost link is said even to a follower that is full. */
const MARKER_ROOM = 16;
/** Characters of line text one follower may hold (with 16 KiB lines, 2000 entries alone would be 32 MB). */
export const DEFAULT_FOLLOWER_MAX_CHARS = 2 * 1024 * 1024;

export class FollowerQueue implements Disposable {
  private entries: LogEntry[] = [];
  private chars = 0;
  private dropped = 0;
  private readonly queuedEmitter = new Emitter<void>();
  /** Fires when the queue goes from empty to not empty (a consumer that drained it waits for this). */
  readonly onDidQueue = this.queuedEmitter.on.bind(this.queuedEmitter);
  private _ended: AppError | null | undefined = undefined;
  private readonly endEmitter = new Emitter<AppError | null>();
  /** Fires once when the follow ends: null (closed, unfollowed), or the coded error that ended it. */
  readonly onDidEnd = this.endEmitter.on.bind(this.endEmitter);
  /** Lines dropped for this follower in all (for the view and the tests). */
  droppedTotal = 0;

  constructor(
    readonly id: string,
    private readonly maxEntries: number,
    private readonly matches: (text: string) => boolean,
    private readonly clock: Clock,
    private readonly maxChars = DEFAULT_FOLLOWER_MAX_CHARS,
  ) {}

  get queued(): number {
    return this.entries.length;
  }
  /** undefined while the follow runs; null or the error once it ended. */
  get ended(): AppError | null | undefined {
    return this._ended;
  }

  offer(entry: LogEntry): void {
    if (this._ended !== undefined) return;
    if (entry.type === 'line' && !this.matches(entry.text)) return;
    const wasEmpty = this.entries.length === 0;
    if (entry.type === 'line') {
      if (this.entries.length >= this.maxEntries || this.chars + entry.text.length > this.maxChars) {
        this.dropped++;
        this.droppedTotal++;
        return;
      }
      this.flushDropped();
      this.entries.push(entry);
      this.chars += entry.text.length;
    } else {
      if (this.entries.length >= this.maxEntries + MARKER_ROOM) return;
      this.flushDropped();
      this.entries.push(entry);
    }
    if (wasEmpty) this.queuedEmitter.fire();
  }

  /** Takes up to `max` entries, in order; a pending "dropped" marker comes out once the lines before it are taken. */
  take(max = Infinity): LogEntry[] {
    const out = this.entries.splice(0, Math.min(max, this.entries.length));
    for (const e of out) if (e.type === 'line') this.chars -= e.text.length;
    // Drained: the drop that followed these lines is said right after them.
    if (this.entries.length === 0 && out.length < max && this.dropped > 0) {
      this.flushDropped();
      out.push(...this.entries.splice(0));
    }
    return out;
  }

  end(error: AppError | null): void {
    if (this._ended !== undefined) return;
    this.flushDropped();
    this._ended = error;
    this.endEmitter.fire(error);
    this.queuedEmitter.fire();
  }

  dispose(): void {
    this.end(null);
    this.queuedEmitter.dispose();
    this.endEmitter.dispose();
  }

  private flushDropped(): void {
    if (this.dropped === 0) return;
    const n = this.dropped;
    this.dropped = 0;
    const marker: LogMarker = {
      type: 'marker',
      marker: 'dropped',
      text: `dropped ${n} line${n === 1 ? '' : 's'}: the view could not keep up`,
      code: LogsErrorCode.LINES_DROPPED,
      count: n,
      at: this.clock.now(),
    };
    this.entries.push(marker);
  }
}
