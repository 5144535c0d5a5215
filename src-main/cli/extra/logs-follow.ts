// `gpu-console logs --follow`: a follow held by the running console, whose
// lines come as `logs.batch` events on the bridge's event stream. The stream
// is opened before the follow is asked for, so its first batch cannot pass
// unseen; the lease is renewed every half lease; Ctrl-C unfollows (the
// console closes the remote tail when its last follower leaves) and exits 0.
// The console ending the follow with a coded error (LOGS_NOT_PERMITTED, the
// source gone for good) ends the command with that error (exit 1). Batches
// carry their index in the follow: entries the bridge skipped while this
// reader was backed up are said with their count, a repeat is left out.
import { LogsBatchSchema, LogsEndedSchema, LogsErrorCode, parseStrict, sequenceBatch, streamLostMarker, type LogEntry, type LogsBatch } from '../../../src-preload/contract/index.js';
import { AppError, toAppError } from '../../core/base/index.js';
import { callRunningConsole } from '../bridge-client.js';
import { CliErrorCode } from '../errors.js';
import { openConsoleEvents, type ConsoleEvent, type ConsoleEvents } from '../event-stream.js';
import { EXIT, shown, type Output } from '../output.js';
import type { LogsArgs } from './logs-args.js';
import { entryPrinter, sourceNotes } from './logs-print.js';

/** Events kept while the follow's id is not known yet (they are almost all other follows'). */
const MAX_EARLY_EVENTS = 1000;
/** How long Ctrl-C waits for the console to take the unfollow. */
const UNFOLLOW_TIMEOUT_MS = 5_000;
const WHY = ': the logs are read over its SSH sessions';
const STREAM_WORDS = "the console's event stream";

export interface FollowIo {
  /** Registers the interrupt handler (Ctrl-C); returns its removal. */
  onInterrupt(handler: () => void): () => void;
  /** Registers what to do when stdout's reader went away (`| head -5`); returns its removal. */
  onOutputGone(handler: () => void): () => void;
}

export const processIo: FollowIo = {
  onInterrupt(handler) {
    process.on('SIGINT', handler);
    return () => process.off('SIGINT', handler);
  },
  onOutputGone(handler) {
    // Node ignores SIGPIPE: a write to a closed pipe is an EPIPE error on stdout instead.
    // The listener stays for the process's life: a write's EPIPE reported after the follow ended would
    // otherwise be an unhandled 'error' event.
    let active = true;
    process.stdout.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE') throw err;
      if (active) handler();
    });
    return () => (active = false);
  },
};

export class LogsFollowRun {
  private followId: string | null = null;
  private early: ConsoleEvent[] = [];
  private events: ConsoleEvents | null = null;
  private renewTimer: NodeJS.Timeout | null = null;
  private removeInterrupt: (() => void) | null = null;
  private interrupted = false;
  /** The index of the next entry of this follow. */
  private nextIndex = 0;
  private settle!: (result: number | AppError) => void;
  private readonly done = new Promise<number | AppError>((resolve) => (this.settle = resolve));
  private readonly print: (entry: LogEntry) => void;

  constructor(
    private readonly dataDir: string,
    private readonly args: LogsArgs,
    private readonly output: Output,
    private readonly io: FollowIo = processIo,
  ) {
    this.print = entryPrinter(output, args);
  }

  /** Resolves with the exit code; rejects with the coded error that ended the follow. */
  async run(): Promise<number> {
    this.events = await openConsoleEvents(
      this.dataDir,
      {
        wants: (channel) => channel === 'logs.batch' || channel === 'logs.ended',
        onEvent: (event) => this.onEvent(event),
        onEnd: (error) => this.finish(error ?? new AppError(CliErrorCode.BRIDGE_UNREACHABLE, 'the console closed its event stream (it is stopping?)')),
      },
      WHY,
    );
    // Held from before the follow is asked for: a Ctrl-C while it starts still unfollows once it has an id.
    const removeSigint = this.io.onInterrupt(() => this.interrupt());
    const removeEpipe = this.io.onOutputGone(() => this.stop());
    this.removeInterrupt = () => {
      removeSigint();
      removeEpipe();
    };
    try {
      const { label, serviceId, lines, sinceMs, filter } = this.args;
      const started = await callRunningConsole(this.dataDir, 'logs.follow', { label, serviceId, lines, ...(sinceMs !== undefined ? { sinceMs } : {}), ...(filter ? { filter } : {}) });
      this.followId = started.followId;
      if (this.interrupted) this.unfollow(started.followId);
      else {
        sourceNotes(this.output, started.source, this.args);
        this.renewTimer = setInterval(() => void this.renew(), Math.max(1_000, Math.floor(started.leaseMs / 2)));
        const early = this.early;
        this.early = [];
        for (const event of early) this.onEvent(event);
      }
    } catch (err) {
      this.finish(toAppError(err));
    }
    const result = await this.done;
    if (result instanceof AppError) throw result;
    return result;
  }

  private onEvent(event: ConsoleEvent): void {
    if (this.followId === null) {
      this.early.push(event);
      if (this.early.length > MAX_EARLY_EVENTS) this.early.shift();
      return;
    }
    if (event.channel === 'logs.batch') {
      const batch = parseStrict(LogsBatchSchema, event.payload);
      if (!batch.ok) return this.finish(new AppError(CliErrorCode.BRIDGE_UNREACHABLE, `logs.batch does not match the contract: ${batch.message}`));
      if (batch.data.followId === this.followId) this.printBatch(batch.data);
      return;
    }
    const ended = parseStrict(LogsEndedSchema, event.payload);
    if (!ended.ok || ended.data.followId !== this.followId) return;
    // The last batches can be skipped too; the end says how many entries there were.
    this.sayLost(ended.data.endIndex - this.nextIndex);
    if (ended.data.error) this.finish(AppError.fromWire(ended.data.error));
    else this.finish(this.interrupted ? EXIT.OK : new AppError(LogsErrorCode.FOLLOW_UNKNOWN, 'the console ended the follow (its lease ran out, or it is stopping)'));
  }

  private printBatch(batch: LogsBatch): void {
    // Once stopping, nobody wants more lines (and a closed stdout would only answer EPIPE again).
    if (this.interrupted) return;
    const seq = sequenceBatch(this.nextIndex, batch);
    this.sayLost(seq.lost);
    this.nextIndex = seq.nextIndex;
    for (const entry of seq.fresh) this.print(entry);
  }

  private sayLost(count: number): void {
    if (count <= 0 || this.interrupted) return;
    this.print(streamLostMarker(count, Date.now(), STREAM_WORDS));
  }

  private async renew(): Promise<void> {
    const id = this.followId;
    if (id === null || this.interrupted) return;
    try {
      const r = await callRunningConsole(this.dataDir, 'logs.renew', { followIds: [id] });
      if (r.unknown.includes(id)) this.finish(new AppError(LogsErrorCode.FOLLOW_UNKNOWN, `the console no longer holds follow ${id}`));
    } catch (err) {
      // The event stream says when the console is gone; one failed renewal is only said.
      const e = toAppError(err);
      this.output.err(`[lease renewal failed: ${e.code}: ${shown(e.message)}]`);
    }
  }

  private interrupt(): void {
    if (this.interrupted) {
      // A second Ctrl-C: do not wait for the console any longer (the lease ends the follow).
      this.finish(130);
      return;
    }
    this.stop();
  }

  /** Unfollows once (Ctrl-C, or nobody reads stdout any more); the command then exits 0. */
  private stop(): void {
    if (this.interrupted) return;
    this.interrupted = true;
    // Before the console answered logs.follow there is no id yet: run() unfollows when it comes.
    if (this.followId !== null) this.unfollow(this.followId);
  }

  private unfollow(id: string): void {
    callRunningConsole(this.dataDir, 'logs.unfollow', { followId: id }, { timeoutMs: UNFOLLOW_TIMEOUT_MS }).then(
      () => this.finish(EXIT.OK),
      (err: unknown) => {
        const e = toAppError(err);
        this.output.err(`[unfollow failed: ${e.code}: ${shown(e.message)}; the console ends the follow when its lease runs out]`);
        this.finish(EXIT.OK);
      },
    );
  }

  private finish(result: number | AppError): void {
    if (this.renewTimer) clearInterval(this.renewTimer);
    this.renewTimer = null;
    this.removeInterrupt?.();
    this.removeInterrupt = null;
    this.events?.close();
    this.settle(result);
  }
}
