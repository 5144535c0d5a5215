// One round trip per host per poll (issue #31 item 1). The host's sources keep
// reading through their two seams (ExecRunner, HttpGet); while the host runs
// the collector, the calls they make in one poll are gathered (everything
// asked before the event loop turns) and answered from ONE exec of the
// collector script (collector-script.ts), part by part. A part that fails
// fails alone, with its own code; the sources parse their parts as before.
// Where the session can stream (ssh2), that one exec stays open between polls
// (collector-resident*.ts): each poll is one request line on its stdin, which
// saves the open/close of an exec channel per host per poll; what it cannot
// answer, and every poll while it is broken, goes through one exec as before.
// Hosts that cannot run it (the probe: not a POSIX shell, no curl, curl too
// old) or whose answers keep failing are read through the tunnels, with the
// reason shown; they are probed again later.
import { AppError, toAppError, type Clock, type Logger } from '../base/index.js';
import type { ExecRunner, HttpGet, HttpText } from '../telemetry/index.js';
import { COLLECTOR_PROBE, collectorScript, curlRecentEnough, endpointUrl, MIN_CURL, newBoundary, parseCollectorAnswer, parseProbe } from './collector-script.js';
import { failBatch, settleBatch, type Batch, type ExecAnswer } from './collector-parts.js';
import { ResidentCollector, type StreamRunner } from './collector-resident-host.js';
import { FleetErrorCode } from './errors.js';

/** Exec parts with a longer deadline than this (a `du` round) run on their own: the poll does not wait for them (a figures-only health round, 10 s + the faults query's 28 s, rides along). */
const BATCH_EXEC_MAX_MS = 40_000;
/** Whole answers that failed in a row before the host is read through tunnels. */
const FAILURES_BEFORE_FALLBACK = 2;
/** After a fallback or a probe that said no: probe again this much later (curl may be installed meanwhile). */
const REPROBE_AFTER_MS = 5 * 60_000;
/** A probe that could not run (timeout, link trouble): try again soon. */
const REPROBE_SOON_MS = 30_000;
/** A host clock further off than this is reported (readings keep the console's time either way). */
const SKEW_REPORTED_S = 60;
const PROBE_TIMEOUT_MS = 5_000;

export type ReadMode = 'probing' | 'collector' | 'tunnels';

/** The fleet's StaleCause (state.ts imports this file's types, so it is spelled here). */
type StaleCause = { readonly code: string; readonly message: string };

export interface HostReadState {
  readonly mode: ReadMode;
  /** Why the host is read through tunnels; null otherwise. */
  readonly reason: StaleCause | null;
  /** Host clock minus the console's, seconds, when it is off by more than a minute; null otherwise. */
  readonly clockSkewS: number | null;
}

export interface CollectorOptions {
  label: string;
  /** The host session's own exec. */
  exec: ExecRunner;
  clock: Clock;
  logger: Logger;
  /** Per-endpoint deadline on the host (the same as a tunnelled read's). */
  httpTimeoutMs: number;
  /** `tunnels`: never use the collector on this host (config `telemetry.read`). */
  read?: 'auto' | 'tunnels';
  /** The session's streaming exec: with it the collector stays resident (one exec open, a request line a poll). */
  stream?: StreamRunner;
}

export class HostCollector {
  private mode: ReadMode = 'probing';
  private reason: StaleCause | null = null;
  private probeAt = 0;
  private useTimeout = false;
  private failures = 0;
  private skewS: number | null = null;
  private batch: Batch | null = null;
  private epoch = 0;
  private readonly resident: ResidentCollector;

  /** The exec the host's sources use: batched while the collector runs, else the session's. */
  readonly exec: ExecRunner;

  constructor(private readonly options: CollectorOptions) {
    this.resident = new ResidentCollector({
      label: options.label,
      stream: options.stream ?? null,
      clock: options.clock,
      logger: options.logger,
      httpTimeoutMs: options.httpTimeoutMs,
      fallback: (batch) => void this.run(batch),
      onHostTime: (t, started, ended) => this.noteSkew(t, started, ended),
    });
    if (options.read === 'tunnels') this.toTunnels({ code: FleetErrorCode.COLLECTOR_UNSUPPORTED, message: 'telemetry.read is tunnels for this host' }, Infinity);
    this.exec = (command, o) => {
      const timeoutMs = o.timeoutMs ?? 10_000;
      if (this.mode !== 'collector' || timeoutMs > BATCH_EXEC_MAX_MS || o.signal) return this.options.exec(command, o);
      return new Promise<ExecAnswer>((resolve, reject) => this.queue().execs.push({ command, timeoutMs, maxBytes: o.maxOutputBytes ?? 1024 * 1024, resolve, reject }));
    };
  }

  /** A service's HttpGet: through the collector while it runs, else through the tunnel's `direct`. */
  httpGet(remoteHost: string, remotePort: number, direct: HttpGet): HttpGet {
    return (path, o = {}) => {
      if (this.mode !== 'collector' || o.signal) return direct(path, o);
      const url = endpointUrl(remoteHost, remotePort, path);
      return new Promise<HttpText>((resolve, reject) => this.queue().gets.push({ url, host: remoteHost, port: remotePort, path, maxBytes: o.maxBytes ?? 8 * 1024 * 1024, resolve, reject }));
    };
  }

  state(): HostReadState {
    const reason = this.mode === 'collector' ? this.resident.reason() : this.reason;
    return { mode: this.mode, reason, clockSkewS: this.skewS };
  }

  dispose(): void {
    this.epoch++;
    this.resident.dispose();
  }

  /** SSH went away: the next connection is probed afresh (it may be another machine behind the name). */
  onDisconnected(): void {
    this.epoch++;
    this.resident.reset(false);
    if (this.options.read === 'tunnels') return;
    this.mode = 'probing';
    this.reason = null;
    this.probeAt = 0;
    this.failures = 0;
  }

  /** Before a poll on a connected host: probe when due. Never throws. */
  async prepare(): Promise<void> {
    if (this.mode === 'collector' || this.options.clock.now() < this.probeAt) return;
    const epoch = this.epoch;
    let stdout: string;
    try {
      const res = await this.options.exec(COLLECTOR_PROBE, { timeoutMs: PROBE_TIMEOUT_MS, maxOutputBytes: 64 * 1024 });
      stdout = res.stdout;
    } catch (err) {
      const e = toAppError(err);
      if (epoch === this.epoch) this.toTunnels({ code: e.code, message: `the collector probe did not run: ${e.message}` }, REPROBE_SOON_MS);
      return;
    }
    if (epoch !== this.epoch) return;
    const p = parseProbe(stdout);
    const unsupported = (message: string) => this.toTunnels({ code: FleetErrorCode.COLLECTOR_UNSUPPORTED, message }, REPROBE_AFTER_MS);
    if (!p.posix) return unsupported("the host's shell did not answer the probe as a POSIX sh (fish, csh or a forced command?)");
    if (p.curl === null) return unsupported('curl is not installed on the host');
    if (!curlRecentEnough(p.curlVersion)) return unsupported(`curl ${p.curlVersion ?? '(version unknown)'} is older than ${MIN_CURL.join('.')}`);
    this.useTimeout = p.timeout;
    this.resident.reset(p.timeout);
    this.mode = 'collector';
    this.reason = null;
    this.failures = 0;
    this.options.logger.info('host read by the collector', { curl: p.curlVersion, timeout: p.timeout });
  }

  private toTunnels(reason: StaleCause, retryInMs: number): void {
    this.mode = 'tunnels';
    this.reason = reason;
    this.probeAt = this.options.clock.now() + retryInMs;
  }

  private queue(): Batch {
    if (this.batch) return this.batch;
    const batch: Batch = { execs: [], gets: [] };
    this.batch = batch;
    // Everything the poll's sources ask before the loop turns rides this one exec.
    setImmediate(() => {
      this.batch = null;
      const resident = this.resident.take(batch);
      if (resident) void this.resident.run(resident);
      if (batch.execs.length + batch.gets.length > 0) void this.run(batch);
    });
    return batch;
  }

  private async run(batch: Batch): Promise<void> {
    const { clock, httpTimeoutMs } = this.options;
    const boundary = newBoundary();
    const execs = batch.execs.map((e, i) => ({ name: `x${i}`, command: e.command, timeoutMs: e.timeoutMs }));
    const script = collectorScript({ boundary, execs, urls: batch.gets.map((g) => ({ url: g.url })), httpTimeoutMs, useTimeout: this.useTimeout });
    const deadlineMs = execs.reduce((n, e) => n + e.timeoutMs, 0) + batch.gets.length * httpTimeoutMs + 2_000;
    const capBytes = batch.execs.reduce((n, e) => n + e.maxBytes, 0) + batch.gets.reduce((n, g) => n + g.maxBytes, 0) + 64 * 1024;
    const epoch = this.epoch;
    const started = clock.now();
    let res: Awaited<ReturnType<ExecRunner>> & { truncated?: boolean };
    try {
      res = await this.options.exec(script, { timeoutMs: deadlineMs, maxOutputBytes: capBytes });
    } catch (err) {
      const e = toAppError(err);
      this.failAll(batch, new AppError(FleetErrorCode.COLLECTOR_FAILED, `the collector's exec failed: ${e.code}: ${e.message}`, { retryable: true, cause: err }), epoch);
      return;
    }
    const answer = parseCollectorAnswer(res.stdout, boundary);
    if (!answer.framed) {
      const line = (res.stderr || res.stdout).trim().split('\n')[0]?.slice(0, 160) ?? '';
      const message = `the host's shell did not run the collector (exit ${res.exitCode ?? res.signal ?? '?'}${line ? `: ${line}` : ''})`;
      this.failAll(batch, new AppError(FleetErrorCode.COLLECTOR_NO_ANSWER, message, { retryable: true }), epoch);
      return;
    }
    if (epoch === this.epoch) this.failures = 0;
    this.noteSkew(answer.hostTimeS, started, clock.now());
    const truncated = res.truncated === true;
    settleBatch(batch, answer, this.useTimeout, httpTimeoutMs, truncated);
  }

  private failAll(batch: Batch, err: AppError, epoch: number): void {
    failBatch(batch, err);
    if (epoch !== this.epoch || this.mode !== 'collector') return;
    this.options.logger.warn('collector answer failed', { code: err.code, message: err.message });
    if (++this.failures >= FAILURES_BEFORE_FALLBACK) this.toTunnels({ code: err.code, message: `${FAILURES_BEFORE_FALLBACK} collector answers in a row failed; last: ${err.message}` }, REPROBE_AFTER_MS);
  }

  private noteSkew(hostTimeS: number | null, startedMs: number, endedMs: number): void {
    if (hostTimeS === null) return;
    const skew = Math.round(hostTimeS - (startedMs + endedMs) / 2000);
    this.skewS = Math.abs(skew) > SKEW_REPORTED_S ? skew : null;
  }
}
