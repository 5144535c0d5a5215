// Stage: dispatch. An admitted request goes to where its upstream is now (the
// tunnel may have moved or dropped while it waited), with the upstream's API
// key when it has one, over the upstream's UpstreamClient: the fleet's, bound to
// its tunnel (a tunnel opened again comes with a new one), or — for a resolver
// that answers a URL — one this stage makes per upstream for the origin it
// has now, closing the previous origin's rather than keeping it. Its slot is
// released when it ends. Owns those URL clients, the key cache, and the list of
// requests being forwarded per upstream (what a drain waits for or cuts).
import { describeUrlTarget, fireAndForget, silentLogger, type Logger, type OnPremGuard } from '../../base/index.js';
import { UpstreamClient } from '../../upstream/index.js';
import { wire, type Exchange } from '../exchange.js';
import { forward } from '../upstream-exchange.js';
import { timeoutsFor } from '../shaping.js';
import type { StoredAnswer } from '../idempotency.js';
import { LiveList } from '../live-list.js';
import type { Lease } from '../pool.js';
import type { UpstreamSpec } from '../registry.js';
import type { UpstreamResolver } from '../resolver.js';
import type { SecretStore } from '../../ports.js';
import { drainingError, retryAfterS, unavailableError } from './refusals.js';
import { stop, type StageEnv } from './stage.js';
import type { WireError } from '../errors.js';
import type { Target, UpstreamBody } from './upstream.js';

export class DispatchStage {
  /** By upstream key, for resolvers that answer a URL: one client each, for its current origin. */
  private readonly urlClients = new Map<string, { origin: string; client: UpstreamClient }>();
  private readonly apiKeys = new Map<string, string>();
  private readonly running = new Map<string, LiveList<Exchange>>();

  constructor(
    private readonly env: StageEnv,
    private readonly resolver: UpstreamResolver,
    private readonly secrets: SecretStore | null,
    private readonly offPrem: OnPremGuard | null = null,
    private readonly logger: Logger = silentLogger,
  ) {}

  /** The requests being forwarded to one upstream now (undefined before its first). */
  runningOn(key: string): LiveList<Exchange> | undefined {
    return this.running.get(key);
  }

  /**
   * Relays the upstream's answer (upstream-exchange.ts writes the upstream failures) and gives the copy kept
   * for an idempotent replay when `capture`. Its own refusals — upstream_key_unavailable,
   * upstream_draining or proxy_shutting_down when a drain cut the request — are answered here,
   * before the slot is released: a drain (or close()) waits on that slot and must not cut the socket
   * before the answer is out. A failure before anything reached the client (the tunnel dropped
   * while the request waited, the upstream refused the connection) comes back unanswered as
   * `early`, so the caller can try another replica or answer it.
   */
  async dispatch(
    ex: Exchange,
    { spec, pool }: Target,
    lease: Lease,
    out: UpstreamBody,
    path: string,
    capture: boolean,
    /** Another replica could take it: a failure before anything reached the client comes back as `early`. */
    mayFailover = false,
  ): Promise<DispatchOutcome> {
    let served = false;
    const running = this.runningList(spec.key);
    // In flight from here (a failover's attempt starts its own clock): what the stalled-request figures read.
    ex.sentAt = this.env.mono();
    const node = running.add(ex);
    try {
      if (ex.clientGone) return DONE_OUTCOME;
      // The tunnel may have moved or dropped while the request waited.
      const avail = this.resolver.resolve(spec);
      if (!avail.ok) return mayFailover ? { kind: 'early', error: unavailableError(avail, pool) } : answered(ex, unavailableError(avail, pool));
      ex.url = avail.url;
      // A tunnel's client is on this machine by construction; a URL's is checked once, when it is made.
      const client = avail.client ?? this.clientFor(spec.key, avail.url);
      if (client === null) {
        return answered(ex, wire(502, 'upstream_off_prem', `${spec.key} resolved to ${describeUrlTarget(avail.url)}, outside loopback and the console's tunnels; refused`, { retryAfterS: 600 }));
      }
      let apiKey: string | null = null;
      if (spec.apiKeyRef) {
        try {
          apiKey = await this.apiKeyFor(spec);
        } catch (err) {
          return answered(ex, wire(503, 'upstream_key_unavailable', (err as Error).message, { retryAfterS: 30 }));
        }
      }
      if (ex.clientGone) return DONE_OUTCOME;
      const { settings, mono } = this.env;
      const timeouts = timeoutsFor(settings, spec);
      const result = await forward(ex, {
        dispatcher: client.dispatcher,
        freshConnection: () => client.openFreshConnection(),
        origin: client.dispatchOrigin,
        path: client.fullPath(path),
        body: out.body,
        apiKey,
        headersTimeoutMs: timeouts.headersMs,
        idleTimeoutMs: timeouts.idleMs,
        totalTimeoutMs: timeouts.totalMs,
        timeoutFrom: timeouts.from,
        stripUsage: out.stripUsage,
        monotonic: mono,
        capture,
        deferEarly: mayFailover,
        rateLimitRetryAfterS: () => retryAfterS(pool, pool.queuedTotal),
        tunnel: client.key !== null,
        logger: this.logger,
      });
      served = result.completed;
      if (result.usage) {
        ex.tokensIn = result.usage.promptTokens;
        ex.tokensOut = result.usage.completionTokens;
      }
      if (result.failure === 'drain') {
        if (this.env.closing) return answered(ex, wire(503, 'proxy_shutting_down', 'the console is shutting down; the request was cut', { retryAfterS: 5 }));
        // Cut at the drain deadline: the same calibrated refusal a new request gets now (a restart: its expected time).
        const cut = drainingError(spec.key, pool, false, this.env.clock.now());
        return answered(ex, { ...cut, message: `${cut.message} (this request was cut at the drain deadline)` });
      }
      if (result.early) return { kind: 'early', error: result.early };
      if (!result.completed) return DONE_OUTCOME;
      return { kind: 'served', captured: result.captured ? { ...result.captured, upstream: spec.key } : null };
    } finally {
      running.remove(node);
      lease.release(served);
    }
  }

  /** Closes the connections of the clients it made now (the fleet's clients close with their tunnels). */
  async close(): Promise<void> {
    await Promise.allSettled([...this.urlClients.values()].map((d) => d.client.destroy()));
    this.urlClients.clear();
  }

  private async apiKeyFor(spec: UpstreamSpec): Promise<string | null> {
    if (!spec.apiKeyRef) return null;
    const cached = this.apiKeys.get(spec.apiKeyRef);
    if (cached !== undefined) return cached;
    if (!this.secrets) throw new Error(`the API key for ${spec.key} (${spec.apiKeyRef}) cannot be read: no secret store in this mode`);
    const value = await this.secrets.get(spec.apiKeyRef);
    if (value === null) throw new Error(`the secret store holds no API key named ${spec.apiKeyRef} for ${spec.key}`);
    this.apiKeys.set(spec.apiKeyRef, value);
    return value;
  }

  /** The client of a URL an upstream resolved to; null when the on-prem guard refused it (counted, nothing made). */
  private clientFor(key: string, origin: string): UpstreamClient | null {
    const held = this.urlClients.get(key);
    if (held?.origin === origin) return held.client;
    let client: UpstreamClient;
    try {
      client = UpstreamClient.forUrl(origin, { onPrem: this.offPrem, purpose: 'proxy' });
    } catch {
      return null;
    }
    // An upstream that moves (a reconnect) would grow one client per origin, forever: the old one
    // finishes what it carries, then closes.
    if (held) fireAndForget(held.client.close(), this.logger, `closing the client of ${key}'s previous origin`);
    this.urlClients.set(key, { origin, client });
    return client;
  }

  private runningList(key: string): LiveList<Exchange> {
    let list = this.running.get(key);
    if (!list) {
      list = new LiveList();
      this.running.set(key, list);
    }
    return list;
  }
}

/** How a dispatch ended: answered (with the copy for a replay), done (answered or the client left), or failed before anything reached the client. */
export type DispatchOutcome =
  | { kind: 'served'; captured: StoredAnswer | null }
  | { kind: 'done' }
  | { kind: 'early'; error: WireError };

const DONE_OUTCOME: DispatchOutcome = { kind: 'done' };

function answered(ex: Exchange, error: WireError): DispatchOutcome {
  stop(ex, error);
  return DONE_OUTCOME;
}
