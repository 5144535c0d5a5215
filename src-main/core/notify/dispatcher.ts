// Delivers notices to outside channels without ever blocking the caller:
// `dispatch` only enqueues. Each channel has its own bounded queue (overflow
// drops the oldest), a per-minute rate limit, quiet hours (criticals pass:
// a host down at 3 a.m. is why the channel exists) and retries with
// exponential backoff with jitter. Every attempt is recorded, without URL or secret.
// The secret and the destination rule are asked per attempt from the channel's
// owner (the registry), which decides whose secret may go where.
import { backoffDelayMs, Emitter, type Clock } from '../base/index.js';
import type { NotifyChannelConfig, NotifyDelivery } from '../../../src-preload/contract/notify.js';
import { UndiciSender, type DestinationRule, type Sender } from './destination.js';
import { NotifyErrorCode } from './errors.js';
import type { ConsoleNotification, NotificationSeverity } from './router.js';
import { buildRequest } from './shapes.js';
import { inQuietHours } from './quiet-hours.js';

export type { Sender, SendResult } from './destination.js';

/** Failures a retry cannot mend: the same refusal would come back. */
const FINAL_CODES: ReadonlySet<string> = new Set([NotifyErrorCode.DESTINATION_REFUSED, NotifyErrorCode.SECRET_REF_FORBIDDEN, NotifyErrorCode.CHANNEL_CHANGED]);

export interface DeliveryDispatcherOptions {
  clock: Clock;
  channels: () => NotifyChannelConfig[];
  /** The channel's secret, or null when it has none; rejects (coded) when the channel may not use the secret it names. */
  secret: (channel: NotifyChannelConfig) => Promise<string | null>;
  /** Where the channel may send: null = any address (config.yaml's channels); default: no loopback, link-local or metadata address. */
  destination?: (channel: NotifyChannelConfig) => DestinationRule | null;
  /** Every attempt, with the notice it was for (its severity and title are stored beside it). */
  record: (d: NotifyDelivery, n: ConsoleNotification) => void;
  /** Default: undici, guarded by `destination` (its agents are closed on dispose). */
  send?: Sender;
  maxAttempts?: number;
  initialBackoffMs?: number;
  maxBackoffMs?: number;
  /** Spread of each retry delay (±20 %), so channels that failed together do not retry in step; tests pin it. */
  random?: () => number;
  timeoutMs?: number;
  queueBound?: number;
}

const RANK: Record<NotificationSeverity, number> = { info: 0, warning: 1, critical: 2 };

/** A notice an outside channel could not deliver after its last attempt (or dropped when its queue overflowed). */
export interface UndeliveredNotice {
  readonly channel: Pick<NotifyChannelConfig, 'id' | 'kind'>;
  readonly notice: ConsoleNotification;
  readonly delivery: NotifyDelivery;
}

interface Job {
  channel: NotifyChannelConfig;
  n: ConsoleNotification;
  attempt: number;
  resolve?: (d: NotifyDelivery) => void;
}

export class DeliveryDispatcher {
  private readonly queues = new Map<string, Job[]>();
  private readonly busy = new Set<string>();
  private readonly sentAt = new Map<string, number[]>();
  private readonly timers = new Set<{ dispose(): void }>();
  private disposed = false;
  private readonly undelivered = new Emitter<UndeliveredNotice>();
  /** A routed notice this channel gave up on (never a send-test: its caller has the answer). */
  readonly onDidGiveUp = this.undelivered.on.bind(this.undelivered);
  private readonly ownSender: UndiciSender | null;
  private readonly send: Sender;

  constructor(private readonly o: DeliveryDispatcherOptions) {
    this.ownSender = o.send ? null : new UndiciSender();
    this.send = o.send ?? this.ownSender!.send;
  }

  /** Route a notice to every enabled channel that takes its event and severity. Never awaits. */
  dispatch(n: ConsoleNotification): void {
    for (const c of this.o.channels()) {
      if (!c.enabled || !c.events.includes(n.event ?? 'other') || RANK[n.severity] < RANK[c.minSeverity]) continue;
      const now = this.o.clock.now();
      if (n.severity !== 'critical' && inQuietHours(c.quietHours, now)) {
        this.rec(c, n, 0, 'skipped-quiet', null, null, null);
        continue;
      }
      if (!this.takeToken(c, now)) {
        this.rec(c, n, 0, 'rate-limited', null, null, null);
        continue;
      }
      this.enqueue({ channel: c, n, attempt: 1 });
    }
  }

  /** A test message to one channel, bypassing routing, quiet hours and rate limit; resolves with the last attempt. */
  test(channel: NotifyChannelConfig, n: ConsoleNotification): Promise<NotifyDelivery> {
    return new Promise((resolve) => this.enqueue({ channel, n, attempt: 1, resolve }));
  }

  async dispose(): Promise<void> {
    this.disposed = true;
    for (const t of this.timers) t.dispose();
    this.timers.clear();
    this.queues.clear();
    this.undelivered.dispose();
    await this.ownSender?.dispose();
  }

  private takeToken(c: NotifyChannelConfig, now: number): boolean {
    const recent = (this.sentAt.get(c.id) ?? []).filter((t) => now - t < 60_000);
    if (recent.length >= c.maxPerMinute) {
      this.sentAt.set(c.id, recent);
      return false;
    }
    recent.push(now);
    this.sentAt.set(c.id, recent);
    return true;
  }

  private enqueue(job: Job): void {
    if (this.disposed) return;
    const q = this.queues.get(job.channel.id) ?? [];
    q.push(job);
    const bound = this.o.queueBound ?? 100;
    while (q.length > bound) {
      const dropped = q.shift()!;
      const d = this.rec(dropped.channel, dropped.n, dropped.attempt, 'dropped-overflow', null, 'queue full', null);
      this.gaveUp(dropped, d);
    }
    this.queues.set(job.channel.id, q);
    this.pump(job.channel.id);
  }

  private pump(id: string): void {
    if (this.busy.has(id) || this.disposed) return;
    const job = this.queues.get(id)?.shift();
    if (!job) return;
    this.busy.add(id);
    void this.attempt(job).finally(() => {
      this.busy.delete(id);
      this.pump(id);
    });
  }

  private async attempt(job: Job): Promise<void> {
    const { channel: c, n } = job;
    const started = this.o.clock.now();
    let httpStatus: number | null = null;
    let error: string | null = null;
    let final = false;
    try {
      const secret = await this.o.secret(c);
      if (c.secretRef && secret === null && c.kind !== 'ntfy') throw new Error(`secret ${c.secretRef} is not in the secret store`);
      const rule = this.o.destination ? this.o.destination(c) : { allowLoopback: false };
      const res = await this.send(buildRequest(c, n, secret, started), this.o.timeoutMs ?? 10_000, rule);
      httpStatus = res.status;
      if (res.status >= 200 && res.status < 300) {
        const d = this.rec(c, n, job.attempt, 'delivered', httpStatus, null, this.o.clock.now() - started);
        job.resolve?.(d);
        return;
      }
      error = `HTTP ${res.status}`;
    } catch (e) {
      error = describe(e);
      final = FINAL_CODES.has(error);
    }
    const duration = this.o.clock.now() - started;
    const retryable = !final && (httpStatus === null || httpStatus === 429 || httpStatus >= 500);
    const max = this.o.maxAttempts ?? 5;
    if (!retryable || job.attempt >= max || this.disposed) {
      this.gaveUp(job, this.rec(c, n, job.attempt, 'failed', httpStatus, error, duration));
      return;
    }
    this.rec(c, n, job.attempt, 'retrying', httpStatus, error, duration);
    const delay = backoffDelayMs(job.attempt - 1, { initialMs: this.o.initialBackoffMs ?? 1_000, maxMs: this.o.maxBackoffMs ?? 60_000, jitter: 0.2, random: this.o.random });
    const timer = this.o.clock.setTimeout(() => {
      this.timers.delete(timer);
      this.enqueue({ ...job, attempt: job.attempt + 1 });
    }, delay);
    this.timers.add(timer);
  }

  private gaveUp(job: Job, d: NotifyDelivery): void {
    if (job.resolve) {
      job.resolve(d);
      return;
    }
    if (this.disposed) return;
    this.undelivered.fire({ channel: { id: job.channel.id, kind: job.channel.kind }, notice: job.n, delivery: d });
  }

  private rec(c: NotifyChannelConfig, n: ConsoleNotification, attempt: number, status: NotifyDelivery['status'], httpStatus: number | null, error: string | null, durationMs: number | null): NotifyDelivery {
    const d: NotifyDelivery = { channelId: c.id, event: n.event ?? 'other', notificationKey: n.key, attempt, status, httpStatus, error, at: this.o.clock.now(), durationMs };
    try {
      this.o.record(d, n);
    } catch {
      // Recording must never break delivery.
    }
    return d;
  }
}

/** An error as a short code-like text: never the URL (it may hold a token) or headers. */
function describe(e: unknown): string {
  const err = e as { code?: unknown; name?: string; cause?: { code?: unknown } };
  if (err.name === 'TimeoutError' || err.name === 'AbortError') return 'TIMEOUT';
  const code = typeof err.code === 'string' ? err.code : typeof err.cause?.code === 'string' ? err.cause.code : null;
  if (code) return code;
  return e instanceof Error ? e.message.replace(/https?:\/\/\S+/g, '<url>').slice(0, 200) : 'error';
}
