// A host's resident collector: the command table it was opened with, the one
// open channel, and what happens when it breaks. A poll's parts that the
// channel can answer go to it as one request line; the rest (a command not in
// the table yet, an endpoint path outside the loop's charset, every part while
// the channel waits for its backoff) go through one exec as before. A command
// joins the table the second time a poll asks for it (a command that changes
// every time, like a health round's "since" argument, never does), and the
// channel is reopened with the larger table. Broken channels reopen after a
// backoff; RESIDENT_FAILURES in a row turn the resident form off for a while
// (the host is then read by one exec a poll, and says why).
import { AppError, toAppError, type Clock, type Logger } from '../base/index.js';
import type { ExecStream, ExecStreamOptions } from '../ssh/index.js';
import { failBatch, settleBatch, type Batch } from './collector-parts.js';
import { residentCommandFits, residentEndpointFits, residentRequestLine, residentScript } from './collector-resident-script.js';
import { ResidentChannel } from './collector-resident.js';
import { newBoundary, parseCollectorAnswer } from './collector-script.js';
import { FleetErrorCode } from './errors.js';

/** Channels in a row that broke before the host is read by one exec a poll. */
const RESIDENT_FAILURES = 3;
/** Backoff of a broken channel: this, doubled per failure in a row, at most RESIDENT_BACKOFF_MAX_MS. */
const RESIDENT_BACKOFF_MS = 2_000;
const RESIDENT_BACKOFF_MAX_MS = 60_000;
/** With the resident form off: try it again this much later. */
const RESIDENT_RETRY_MS = 5 * 60_000;
const READY_TIMEOUT_MS = 10_000;
const TABLE_MAX = 32;
const SEEN_MAX = 256;

export type StreamRunner = (command: string, options: ExecStreamOptions) => ExecStream;

export interface ResidentOptions {
  label: string;
  stream: StreamRunner | null;
  clock: Clock;
  logger: Logger;
  httpTimeoutMs: number;
  /** Parts the channel could not take after all (it did not open): read them the one-exec way. */
  fallback(batch: Batch): void;
  /** An answer's host clock, for the skew figure. */
  onHostTime(hostTimeS: number | null, startedMs: number, endedMs: number): void;
}

export class ResidentCollector {
  private table: string[] = [];
  private readonly seen = new Map<string, number>();
  private channel: ResidentChannel | null = null;
  private channelTable = -1;
  private tableVersion = 0;
  private busy = false;
  private failures = 0;
  private retryAt = 0;
  private useTimeout = false;
  private off: { code: string; message: string } | null = null;
  private offUntil = 0;
  /** Bumped by reset: a channel of an earlier connection that breaks counts for nothing. */
  private generation = 0;

  constructor(private readonly options: ResidentOptions) {}

  /** Why the host is not read by the resident shell now; null while it is (or may be). */
  reason(): { code: string; message: string } | null {
    return this.off;
  }

  /** A new probe's answer (new connection): forget the channel and its failures. */
  reset(useTimeout: boolean): void {
    this.generation++;
    this.dispose();
    this.useTimeout = useTimeout;
    this.failures = 0;
    this.retryAt = 0;
    this.off = null;
    this.offUntil = 0;
  }

  dispose(): void {
    this.channel?.close();
    this.channel = null;
  }

  /** The parts of `batch` the resident channel answers this poll; null when it answers none. The rest stay in `batch`. */
  take(batch: Batch): Batch | null {
    for (const e of batch.execs) this.learn(e.command);
    if (!this.usable()) return null;
    const mine: Batch = {
      execs: batch.execs.filter((e) => this.table.includes(e.command)),
      gets: batch.gets.filter((g) => residentEndpointFits(g.host, g.port, g.path)),
    };
    batch.execs = batch.execs.filter((e) => !mine.execs.includes(e));
    batch.gets = batch.gets.filter((g) => !mine.gets.includes(g));
    return mine.execs.length + mine.gets.length > 0 ? mine : null;
  }

  /** Answers `batch` on the channel (opened or reopened first when needed). */
  async run(batch: Batch): Promise<void> {
    const { clock, httpTimeoutMs } = this.options;
    this.busy = true;
    const generation = this.generation;
    let channel: ResidentChannel;
    try {
      channel = await this.open();
    } catch (err) {
      // Nothing was asked of the host yet: this poll is read the one-exec way, not lost.
      if (generation === this.generation) this.failed(toAppError(err));
      this.busy = false;
      this.options.fallback(batch);
      return;
    }
    try {
      const line = residentRequestLine({
        execs: batch.execs.map((e) => ({ entry: this.table.indexOf(e.command), timeoutMs: e.timeoutMs })),
        urls: batch.gets.map((g) => ({ host: g.host, port: g.port, path: g.path })),
        httpTimeoutMs,
      });
      const deadlineMs = batch.execs.reduce((n, e) => n + e.timeoutMs, 0) + batch.gets.length * httpTimeoutMs + 2_000;
      const capBytes = batch.execs.reduce((n, e) => n + e.maxBytes, 0) + batch.gets.reduce((n, g) => n + g.maxBytes, 0) + 64 * 1024;
      const started = clock.now();
      const text = await channel.request(line, deadlineMs, capBytes);
      const answer = parseCollectorAnswer(text, channel.boundary);
      const refused = new RegExp(`(?:^|\\n)${channel.boundary} ! (.*)\\n`).exec(text);
      if (refused) throw new AppError(FleetErrorCode.COLLECTOR_REFUSED, `the resident collector refused the request (${refused[1]}): nothing ran`);
      this.failures = 0;
      this.options.onHostTime(answer.hostTimeS, started, clock.now());
      settleBatch(batch, answer, this.useTimeout, httpTimeoutMs, false);
    } catch (err) {
      const e = toAppError(err);
      failBatch(batch, e);
      if (e.code !== FleetErrorCode.COLLECTOR_REFUSED && generation === this.generation) this.failed(e);
    } finally {
      this.busy = false;
    }
  }

  private usable(): boolean {
    if (!this.options.stream || this.busy) return false;
    const now = this.options.clock.now();
    if (this.off && now >= this.offUntil) {
      this.off = null;
      this.failures = 0;
    }
    return this.off === null && now >= this.retryAt;
  }

  private learn(command: string): void {
    if (this.table.includes(command) || !residentCommandFits(command) || this.table.length >= TABLE_MAX) return;
    const n = (this.seen.get(command) ?? 0) + 1;
    if (n < 2) {
      if (this.seen.size >= SEEN_MAX) this.seen.clear();
      this.seen.set(command, n);
      return;
    }
    this.seen.delete(command);
    this.table.push(command);
    this.tableVersion++;
  }

  private async open(): Promise<ResidentChannel> {
    if (this.channel && !this.channel.closed && this.channelTable === this.tableVersion) return this.channel;
    this.dispose();
    const boundary = newBoundary();
    const script = residentScript(boundary, this.table, this.useTimeout);
    const stream = this.options.stream!(script, { killOnClose: false, highWaterBytes: 4 * 1024 * 1024 });
    const channel = await ResidentChannel.open(stream, boundary, this.options.clock, READY_TIMEOUT_MS);
    this.channel = channel;
    this.channelTable = this.tableVersion;
    this.options.logger.debug('resident collector open', { host: this.options.label, commands: this.table.length });
    return channel;
  }

  private failed(err: AppError): void {
    this.dispose();
    const now = this.options.clock.now();
    if (err.code === FleetErrorCode.COLLECTOR_RESIDENT_OFF) {
      this.off = { code: err.code, message: err.message };
      this.offUntil = Infinity;
      return;
    }
    this.failures++;
    this.retryAt = now + Math.min(RESIDENT_BACKOFF_MAX_MS, RESIDENT_BACKOFF_MS * 2 ** (this.failures - 1));
    this.options.logger.warn('resident collector failed', { host: this.options.label, code: err.code, message: err.message, failures: this.failures });
    if (this.failures >= RESIDENT_FAILURES) {
      this.off = { code: FleetErrorCode.COLLECTOR_RESIDENT_OFF, message: `read by one exec a poll: ${this.failures} resident collector channels in a row broke; last: ${err.code}: ${err.message}` };
      this.offUntil = now + RESIDENT_RETRY_MS;
    }
  }
}
