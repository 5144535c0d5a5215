// The logs capability's service: the last N lines of a service's log, and
// follows shared per service (ten followers, one SSH channel). Log text is
// never stored: it passes through main, masked, to whoever asked for it.
import type { LogEntry, LogFilter, LogSourceView, LogsTailResult } from '../../../src-preload/contract/index.js';
import { AppError, silentLogger, systemClock, type Clock, type Disposable, type Logger } from '../base/index.js';
import type { HostConfig, ServiceConfig } from '../config/index.js';
import type { ExecStream, ExecStreamOptions } from '../ssh/index.js';
import { upstreamKey } from '../upstream/index.js';
import { classifyLine } from './classify.js';
import { LogsErrorCode } from './errors.js';
import { FollowerQueue, lineFilter } from './follower.js';
import { DEFAULT_MAX_LINE_BYTES, maskLine } from './lines.js';
import { readLogStream } from './reader.js';
import { FOLLOW_RING_LINES, SharedFollow } from './shared-follow.js';
import { describeSource, sourceProblem, type LogRecord } from './source-output.js';
import { hasTimestamps, logCommand, logSourceOf, type CommandVars, type LogSource } from './sources.js';

/** What the service needs of the fleet: a host's config, and a stream on its SSH session. */
export interface LogsHosts {
  /** Throws FLEET_UNKNOWN_HOST for a label the fleet does not have. */
  hostConfig(label: string): HostConfig;
  /** Throws SSH_NOT_CONNECTED while the host has no link. */
  execStream(label: string, command: string, options?: ExecStreamOptions): ExecStream;
}

export interface LogsServiceOptions {
  hosts: LogsHosts;
  /** Secret values of a service (its upstream API key) to mask in its lines, besides the patterns every line gets. */
  secretsOf?(label: string, serviceId: string): readonly string[] | Promise<readonly string[]>;
  clock?: Clock;
  logger?: Logger;
  /** Default 16. */
  maxFollowersPerService?: number;
  /** Default 64. */
  maxFollowersTotal?: number;
  /** Entries one follower may have waiting before lines are dropped (and counted); default 2000. */
  followerQueueEntries?: number;
  /** Bytes of one line kept (the rest is cut and counted); default 16 KiB. */
  maxLineBytes?: number;
  /** A tail's deadline; default 20 s. */
  tailTimeoutMs?: number;
}

export interface TailOptions {
  lines: number;
  sinceMs?: number;
  filter?: LogFilter;
  signal?: AbortSignal;
}

export interface FollowOptions {
  lines: number;
  sinceMs?: number;
  filter?: LogFilter;
}

/** A follower's handle: its queue (take, onDidQueue, onDidEnd) and its source. */
export interface LogFollow extends Disposable {
  readonly id: string;
  readonly key: string;
  readonly queue: FollowerQueue;
  readonly source: LogSourceView;
}

interface Resolved {
  host: HostConfig;
  service: ServiceConfig;
  source: LogSource;
  vars: CommandVars;
}

export class LogsService implements Disposable {
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly shared = new Map<string, SharedFollow>();
  private readonly follows = new Map<string, { follow: LogFollow; shared: SharedFollow }>();
  private nextId = 1;
  private disposed = false;

  constructor(private readonly options: LogsServiceOptions) {
    this.clock = options.clock ?? systemClock;
    this.logger = (options.logger ?? silentLogger).child('logs');
  }

  /** SSH channels open for follows now (one per followed service). */
  get channelCount(): number {
    return this.shared.size;
  }
  get followerCount(): number {
    return this.follows.size;
  }
  /** The shared follow of a service, for tests and the view (how often it was opened). */
  sharedFollow(label: string, serviceId: string): SharedFollow | undefined {
    return this.shared.get(keyOf(label, serviceId));
  }

  /** The service's log source in words; LOGS_NOT_CONFIGURED when it has none. */
  sourceView(label: string, serviceId: string): LogSourceView {
    return viewOf(this.resolve(label, serviceId).source);
  }

  async tail(label: string, serviceId: string, options: TailOptions): Promise<LogsTailResult> {
    const r = this.resolve(label, serviceId);
    options = { ...options, lines: boundedLines(options.lines, MAX_TAIL_LINES) };
    const matches = lineFilter(options.filter);
    const command = logCommand(r.source, { lines: options.lines, sinceMs: options.sinceMs, follow: false }, r.vars);
    const secrets = await this.secrets(label, serviceId);
    const deadline = AbortSignal.timeout(this.options.tailTimeoutMs ?? 20_000);
    const signal = options.signal ? AbortSignal.any([options.signal, deadline]) : deadline;
    const stream = this.options.hosts.execStream(label, command, { signal });
    // The command prints about N lines; a command source may print more: the last N are kept.
    const kept: LogRecord[] = [];
    let scanned = 0;
    let problem: AppError | null = null;
    let end;
    try {
      end = await readLogStream(stream, { source: r.source, maxLineBytes: this.maxLineBytes, user: r.host.ssh.user, following: false }, {
        record: (rec) => {
          scanned++;
          kept.push(rec);
          if (kept.length > options.lines) kept.shift();
        },
        notice: () => undefined,
        problem: (e) => (problem = e),
      });
    } catch (err) {
      if (deadline.aborted && !options.signal?.aborted) throw new AppError(LogsErrorCode.TIMEOUT, `${describeSource(r.source)}: no answer within ${this.options.tailTimeoutMs ?? 20_000} ms`, { retryable: true });
      throw err;
    }
    if (problem) throw problem;
    const code = end.exit.exitCode;
    if (code !== 0) {
      throw (
        sourceProblem(r.source, end.ownStderr, code, r.host.ssh.user) ??
        new AppError(LogsErrorCode.COMMAND_FAILED, `${describeSource(r.source)}: the log command ended with ${code === null ? `signal ${end.exit.signal ?? '?'}` : `exit ${code}`}${end.ownStderr.trim() ? `: ${end.ownStderr.trim().split('\n').pop()}` : ''}`, {
          details: { exitCode: code, signal: end.exit.signal },
        })
      );
    }
    const entries: LogEntry[] = [];
    for (const rec of kept) {
      const text = maskLine(rec.text, secrets);
      if (matches(text)) entries.push({ type: 'line', ts: rec.ts, text, stream: rec.stream, failure: rec.binary ? null : classifyLine(text), cutBytes: rec.cutBytes, binary: rec.binary });
    }
    return { source: viewOf(r.source), entries, scanned };
  }

  /** Follows a service's log; joins the service's shared follow when there is one. */
  async follow(label: string, serviceId: string, options: FollowOptions): Promise<LogFollow> {
    if (this.disposed) throw new AppError(LogsErrorCode.FOLLOW_UNKNOWN, 'the logs service is closing');
    const r = this.resolve(label, serviceId);
    options = { ...options, lines: boundedLines(options.lines, FOLLOW_RING_LINES) };
    const matches = lineFilter(options.filter);
    const key = keyOf(label, serviceId);
    this.checkBounds(key);
    // Asked before any await: what the command cannot do fails the call, not the follow.
    logCommand(r.source, { lines: options.lines, sinceMs: options.sinceMs, follow: true }, r.vars);
    let shared = this.shared.get(key);
    if (!shared) {
      const secrets = await this.secrets(label, serviceId);
      this.checkBounds(key);
      shared = this.shared.get(key) ?? this.newShared(key, r, options, secrets);
    }
    const id = `f${this.nextId++}-${key}`;
    const queue = new FollowerQueue(id, this.options.followerQueueEntries ?? 2000, matches, this.clock);
    const owner = shared;
    const follow: LogFollow = { id, key, queue, source: viewOf(r.source), dispose: () => {
        this.unfollow(id);
      },
    };
    this.follows.set(id, { follow, shared: owner });
    queue.onDidEnd(() => {
      this.follows.delete(id);
      owner.remove(queue);
    });
    owner.add(queue, options.lines, options.sinceMs);
    return follow;
  }

  /** Ends one follow; false when the id is not (or no longer) held. */
  unfollow(id: string): boolean {
    const held = this.follows.get(id);
    if (!held) return false;
    held.follow.queue.end(null);
    return true;
  }

  follower(id: string): LogFollow | undefined {
    return this.follows.get(id)?.follow;
  }

  dispose(): void {
    this.disposed = true;
    for (const s of [...this.shared.values()]) s.stop(null);
    this.shared.clear();
    this.follows.clear();
  }

  private get maxLineBytes(): number {
    return this.options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  }

  private checkBounds(key: string): void {
    const perService = this.options.maxFollowersPerService ?? 16;
    const total = this.options.maxFollowersTotal ?? 64;
    const here = this.shared.get(key)?.size ?? 0;
    if (here >= perService || this.follows.size >= total) {
      throw new AppError(
        LogsErrorCode.TOO_MANY_FOLLOWERS,
        here >= perService ? `${key} already has ${here} followers (at most ${perService}); close a Logs view of it first` : `${this.follows.size} log follows are open (at most ${total}); close some first`,
        { retryable: true, details: { key, perService, total } },
      );
    }
  }

  private newShared(key: string, r: Resolved, options: FollowOptions, secrets: readonly string[]): SharedFollow {
    const label = r.host.label;
    const shared = new SharedFollow({
      key,
      source: r.source,
      initial: { lines: options.lines, sinceMs: options.sinceMs },
      command: (q) => logCommand(r.source, q, r.vars),
      open: (command) => this.options.hosts.execStream(label, command),
      mask: (text) => maskLine(text, secrets),
      user: r.host.ssh.user,
      maxLineBytes: this.maxLineBytes,
      clock: this.clock,
      logger: this.logger,
      onStopped: () => {
        if (this.shared.get(key) === shared) this.shared.delete(key);
      },
    });
    this.shared.set(key, shared);
    return shared;
  }

  private resolve(label: string, serviceId: string): Resolved {
    const host = this.options.hosts.hostConfig(label);
    const service = host.services.find((s) => s.id === serviceId);
    if (!service) throw new AppError(LogsErrorCode.NOT_CONFIGURED, `host ${label} has no service ${serviceId}`, { details: { label, serviceId } });
    const source = logSourceOf(service);
    if (!source) {
      throw new AppError(
        LogsErrorCode.NOT_CONFIGURED,
        `${label}/${serviceId} has no log source: add logs: { journal: <unit> }, { compose: { service } }, { docker: <container> }, { file: <path> } or { command: <template> } to the service, or lifecycle.systemdUnit / lifecycle.compose`,
        { details: { label, serviceId } },
      );
    }
    return { host, service, source, vars: { service: service.id, host: host.label, model: service.model, port: service.remotePort } };
  }

  private async secrets(label: string, serviceId: string): Promise<readonly string[]> {
    try {
      return (await this.options.secretsOf?.(label, serviceId)) ?? [];
    } catch (err) {
      this.logger.warn('could not read the service secrets to mask', { label, serviceId, error: (err as Error).message });
      return [];
    }
  }
}

/** A service's key, as every capability names it. */
/** The last N a caller may ask for (the contract's bounds; the CLI and tests call the service directly). */
const MAX_TAIL_LINES = 5000;

function boundedLines(lines: number, max: number): number {
  return Number.isFinite(lines) ? Math.max(0, Math.min(max, Math.floor(lines))) : 0;
}

function keyOf(label: string, serviceId: string): string {
  return upstreamKey(label, serviceId);
}

function viewOf(source: LogSource): LogSourceView {
  return { kind: source.kind, description: describeSource(source), timestamps: hasTimestamps(source) };
}
