// One follow of one service's log, shared by all who watch it: ONE command on
// ONE SSH channel, its lines masked and classified once and handed to each
// follower's bounded queue. When the stream ends it is picked up again: after
// a lost link from the last line (journal cursor; docker's timestamp, with the
// lines of that instant already shown dropped), or, where a source cannot
// resume (a file, a command), with a coded gap marker saying how long the
// view was blind. The last follower to leave closes the channel.
import type { LogLine, LogMarker, LogMarkerKind } from '../../../src-preload/contract/index.js';
import { AppError, backoffDelayMs, type Clock, type Disposable, type Logger } from '../base/index.js';
import { SshErrorCode, type ExecStream } from '../ssh/index.js';
import { classifyLine } from './classify.js';
import { LogsErrorCode } from './errors.js';
import type { FollowerQueue } from './follower.js';
import { readLogStream } from './reader.js';
import { sourceProblem, type LogRecord, type SourceNotice } from './source-output.js';
import { hasTimestamps, type LogQuery, type LogSource, type ResumePoint } from './sources.js';

/** Lines kept for followers who join later (each gets the last of these it asks for), and their text's bound. */
export const FOLLOW_RING_LINES = 1000;
const FOLLOW_RING_CHARS = 1024 * 1024;
/** How many texts of docker's last timestamp are remembered to drop their repeats on resume. */
const INSTANT_TEXTS_MAX = 1000;

export interface SharedFollowSpec {
  key: string;
  source: LogSource;
  /** The first follower's backlog and since; later ones are served from the ring. */
  initial: Pick<LogQuery, 'lines' | 'sinceMs'>;
  /** Builds the command (throws a coded error for what the source cannot do). */
  command(query: LogQuery): string;
  /** Starts the command on the host's session; throws SSH_NOT_CONNECTED while there is no link. */
  open(command: string): ExecStream;
  mask(text: string): string;
  user: string;
  maxLineBytes: number;
  clock: Clock;
  logger: Logger;
  /** Called once when the follow stops for good (last follower gone, or a fatal error). */
  onStopped(): void;
}

const LINK_CODES: ReadonlySet<string> = new Set([SshErrorCode.DISCONNECTED, SshErrorCode.NOT_CONNECTED, SshErrorCode.EXEC_FAILED, SshErrorCode.TIMEOUT]);

export class SharedFollow {
  private readonly followers = new Set<FollowerQueue>();
  private readonly ring: LogLine[] = [];
  private ringChars = 0;
  private stream: ExecStream | null = null;
  private stopped = false;
  private started = false;
  private wake: { timer: Disposable; resolve: () => void } | null = null;
  private cursor: string | null = null;
  private lastRawTs: string | null = null;
  private lastTs: number | null = null;
  private instantTexts = new Map<string, number>();
  /** On resume after docker's --since: repeats of the last instant still to drop. */
  private repeats: { rawTs: string; texts: Map<string, number> } | null = null;
  private readonly startedAt: number;
  /** When the stream last went (null while it runs). */
  private outageSince: number | null = null;
  /** Times the command was started (1 + resumes): for the tests and the view. */
  opened = 0;

  constructor(private readonly spec: SharedFollowSpec) {
    this.startedAt = spec.clock.now();
  }

  get size(): number {
    return this.followers.size;
  }

  /** Adds a follower: it gets the last `lines` of the ring (from `sinceMs`), then what comes. */
  add(follower: FollowerQueue, lines: number, sinceMs: number | undefined): void {
    const backlog = this.ring.filter((e) => sinceMs === undefined || (e.ts !== null && e.ts >= sinceMs));
    for (const e of lines > 0 ? backlog.slice(-lines) : []) follower.offer(e);
    this.followers.add(follower);
    if (!this.started) {
      this.started = true;
      void this.run();
    }
  }

  remove(follower: FollowerQueue): void {
    if (!this.followers.delete(follower)) return;
    if (this.followers.size === 0) this.stop();
  }

  /** Ends every follower with `error` (null: closed) and the channel with them. */
  stop(error: AppError | null = null): void {
    if (this.stopped) return;
    this.stopped = true;
    for (const f of [...this.followers]) f.end(error);
    this.followers.clear();
    this.stream?.close();
    this.stream = null;
    const wake = this.wake;
    this.wake = null;
    void wake?.timer.dispose();
    wake?.resolve();
    this.spec.onStopped();
  }

  private async run(): Promise<void> {
    let query: LogQuery = { ...this.spec.initial, follow: true };
    let failures = 0;
    while (!this.stopped) {
      const outcome = await this.once(query);
      if (this.stopped) return;
      if (outcome.kind === 'fatal') return this.stop(outcome.error);
      failures = outcome.progressed ? 0 : failures + 1;
      // Said once per outage (retries while the link is down add nothing); the picking-up is said when it works.
      if (this.outageSince === null) {
        this.outageSince = this.spec.clock.now();
        if (outcome.kind === 'lost') this.mark('link-lost', `the SSH link went (${outcome.error.code}); the follow resumes when it is back`, LogsErrorCode.LINK_LOST, null);
        else this.mark('source-ended', `the log command ended (exit ${outcome.exitCode ?? 'by signal'}); waiting for the source to come back`, null, null);
      }
      await this.sleep(backoffDelayMs(failures, { initialMs: outcome.kind === 'lost' ? 500 : 2_000, maxMs: outcome.kind === 'lost' ? 5_000 : 30_000 }));
      if (this.stopped) return;
      query = this.resumeQuery();
    }
  }

  /** The query that picks up after the last line. */
  private resumeQuery(): LogQuery {
    const resume: ResumePoint | null = this.cursor ? { cursor: this.cursor } : this.lastRawTs ? { timestamp: this.lastRawTs } : null;
    if (resume) return { lines: 0, follow: true, resume };
    // Nothing shown yet from a source with timestamps: everything since the follow began is new.
    if (hasTimestamps(this.spec.source)) return { lines: 0, sinceMs: this.startedAt, follow: true };
    return { lines: 0, follow: true };
  }

  /** The stream is open again after an outage: say how it picked up (from the last line, or with a gap of N s). */
  private pickedUp(query: LogQuery): void {
    const since = this.outageSince;
    if (since === null) return;
    this.outageSince = null;
    if (query.resume && 'timestamp' in query.resume) this.repeats = { rawTs: query.resume.timestamp, texts: new Map(this.instantTexts) };
    if (query.resume || query.sinceMs !== undefined) {
      const from = query.resume ? ('cursor' in query.resume ? 'the journal cursor' : `timestamp ${query.resume.timestamp}`) : 'the start of the follow';
      this.mark('resumed', `resumed from ${from}: nothing skipped or repeated`, null, null);
      return;
    }
    const gapS = Math.max(0, Math.round((this.spec.clock.now() - since) / 1000));
    this.mark('gap', `gap: ${gapS} s of lines may be missing (a ${this.spec.source.kind} source cannot resume from its last line)`, LogsErrorCode.GAP, gapS);
  }

  private async once(query: LogQuery): Promise<{ kind: 'fatal'; error: AppError } | { kind: 'lost'; error: AppError; progressed: boolean } | { kind: 'ended'; exitCode: number | null; progressed: boolean }> {
    let stream: ExecStream;
    try {
      stream = this.spec.open(this.spec.command(query));
    } catch (err) {
      const e = err instanceof AppError ? err : new AppError(LogsErrorCode.COMMAND_FAILED, String(err));
      return LINK_CODES.has(e.code) ? { kind: 'lost', error: e, progressed: false } : { kind: 'fatal', error: e };
    }
    this.stream = stream;
    this.opened++;
    this.pickedUp(query);
    let problem: AppError | null = null;
    let progressed = false;
    try {
      const end = await readLogStream(stream, { source: this.spec.source, maxLineBytes: this.spec.maxLineBytes, user: this.spec.user, following: true }, {
        record: (r) => {
          progressed = true;
          this.onRecord(r);
        },
        notice: (n) => this.onNotice(n),
        problem: (e) => (problem = e),
      });
      if (problem) return { kind: 'fatal', error: problem };
      const code = end.exit.exitCode;
      if (code !== 0 && code !== null) {
        const known = sourceProblem(this.spec.source, end.ownStderr, code, this.spec.user, true);
        if (known) return { kind: 'fatal', error: known };
      }
      return { kind: 'ended', exitCode: code, progressed };
    } catch (err) {
      const e = err instanceof AppError ? err : new AppError(LogsErrorCode.COMMAND_FAILED, String(err));
      return LINK_CODES.has(e.code) || e.retryable ? { kind: 'lost', error: e, progressed } : { kind: 'fatal', error: e };
    } finally {
      if (this.stream === stream) this.stream = null;
    }
  }

  private onRecord(r: LogRecord): void {
    if (this.repeats) {
      if (r.rawTs === this.repeats.rawTs) {
        const left = this.repeats.texts.get(r.text) ?? 0;
        if (left > 0) {
          this.repeats.texts.set(r.text, left - 1);
          return;
        }
      } else if (r.ts !== null && this.lastTs !== null && r.ts < this.lastTs) return;
      else if (r.rawTs !== undefined) this.repeats = null;
    }
    if (r.cursor) this.cursor = r.cursor;
    if (r.rawTs !== undefined) {
      if (r.rawTs !== this.lastRawTs) {
        this.lastRawTs = r.rawTs;
        this.instantTexts = new Map();
      }
      if (this.instantTexts.size < INSTANT_TEXTS_MAX) this.instantTexts.set(r.text, (this.instantTexts.get(r.text) ?? 0) + 1);
    }
    if (r.ts !== null) this.lastTs = r.ts;
    const text = this.spec.mask(r.text);
    this.fanOut({ type: 'line', ts: r.ts, text, stream: r.stream, failure: r.binary ? null : classifyLine(text), cutBytes: r.cutBytes, binary: r.binary });
  }

  private onNotice(n: SourceNotice): void {
    this.mark(n.notice, n.text, null, null);
  }

  private mark(marker: LogMarkerKind, text: string, code: string | null, count: number | null): void {
    const entry: LogMarker = { type: 'marker', marker, text, code, count, at: this.spec.clock.now() };
    for (const f of this.followers) f.offer(entry);
  }

  private fanOut(entry: LogLine): void {
    this.ring.push(entry);
    this.ringChars += entry.text.length;
    while (this.ring.length > FOLLOW_RING_LINES || (this.ringChars > FOLLOW_RING_CHARS && this.ring.length > 1)) this.ringChars -= this.ring.shift()!.text.length;
    for (const f of this.followers) f.offer(entry);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = this.spec.clock.setTimeout(() => {
        this.wake = null;
        resolve();
      }, ms);
      this.wake = { timer, resolve };
    });
  }
}
