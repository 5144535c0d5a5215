// The proxy's resolver over the fleet: where an upstream is reachable now, or
// why not and for how long — from the fleet's last published state (each poll
// round and each SSH state change), so a request costs no I/O. Each refusal carries a Retry-After fitted
// to its cause: the SSH reconnect's next attempt, a wake's measured time (10 s
// level 1, 60 s level 2 until measured; field notes §4), or a long wait with
// "a person must act" when the host waits for trust or its key changed. A
// reconnect is offered as worth holding for only while the session expects the
// link back by itself (its typed RecoveryExpectation; issue #33).
import { Emitter, toAppError, type Clock, type Logger } from '../base/index.js';
import { FleetErrorCode, type FleetService, type FleetState, type HostState, type ServiceState } from '../fleet/index.js';
import type { RecoveryExpectation } from '../ssh/index.js';
import { upstreamKey, type UpstreamClient } from '../upstream/index.js';
import type { UpstreamSpec } from './registry.js';
import type { Unavailable, UpstreamAvailability, UpstreamResolver } from './resolver.js';

/** How long lifecycle actions take on an upstream (the lifecycle capability measures them); null if unknown. */
export interface WakeEstimates {
  /** Expected wake time of a sleeping upstream, and whether it was measured (else a default). */
  expectedWakeMs(upstream: string): number | null;
  wasMeasured?(upstream: string): boolean;
  expectedRestartMs?(upstream: string): number | null;
}

/**
 * Wake on request, as lifecycle rules it (policy, driver support, an unexpired standing approval): whether a
 * request to a sleeping model may wait for a wake nobody has to approve now. Built before the proxy.
 */
export interface WakePolicy {
  allowed(upstream: string): boolean;
}

/** A request met a sleeping model: `standing` when the wake policy let it wait for a wake (held), else refused. */
export interface WakeWanted {
  upstream: string;
  standing: boolean;
}

/** How long an SSH handshake takes once an attempt starts (added to the wait for the next attempt). */
const CONNECT_MS = 1_500;
/** Retry-After when a person must act first: long, so clients do not hammer a refusal no retry can change. */
export const ACTION_REQUIRED_RETRY_S = 600;
/** A probe that timed out on a connected link: the link is presumed dead until SSH notices and reconnects. */
const DEAD_LINK_RECOVERY_MS = 8_000;
/** How long a model load is expected to take when no restart of the upstream was measured. */
const DEFAULT_LOAD_MS = 30_000;
/** Wake defaults until a wake was measured (field notes §4: Retry-After 10 / 60 s by depth). */
const DEFAULT_WAKE_MS = { 1: 10_000, 2: 60_000 } as const;

export class FleetResolver implements UpstreamResolver {
  private readonly hosts = new Map<string, HostState>();
  private readonly services = new Map<string, ServiceState>();
  private readonly changed = new Emitter<void>();
  private readonly wanted = new Emitter<WakeWanted>();
  /** A held request asked for a wake (the proxy publishes it; lifecycle proposes). */
  readonly onDidWantWake = this.wanted.on.bind(this.wanted);

  constructor(
    private readonly fleet: Pick<FleetService, 'upstream'>,
    private readonly estimates: WakeEstimates,
    private readonly wakePolicy: WakePolicy | null,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  remember(state: FleetState): void {
    this.hosts.clear();
    this.services.clear();
    for (const h of state.hosts) {
      this.hosts.set(h.label, h);
      for (const s of h.services) this.services.set(s.key, s);
    }
    this.changed.fire();
  }

  onDidChange(listener: () => void): { dispose(): unknown } {
    return this.changed.on(listener);
  }

  requestWake(spec: UpstreamSpec): void {
    this.wanted.fire({ upstream: spec.key, standing: true });
  }

  /** A request was refused model_sleeping (not held): the wake is still wanted, for a person to approve. */
  wantWake(upstream: string): void {
    this.wanted.fire({ upstream, standing: false });
  }

  dispose(): void {
    this.changed.dispose();
    this.wanted.dispose();
  }

  /** From the telemetry's last good reading (its /v1/models or /props), not a poll of its own. */
  contextLength(spec: UpstreamSpec): number | null {
    const len = this.services.get(spec.key)?.reading?.maxModelLen ?? null;
    return len !== null && Number.isFinite(len) && len > 0 ? Math.trunc(len) : null;
  }

  resolve(spec: UpstreamSpec): UpstreamAvailability {
    const host = this.hosts.get(spec.label);
    if (host && host.session.state !== 'connected') return this.hostDown(host, spec);
    const view = this.services.get(spec.key);
    // A server that wakes by itself on a request (llama-server --sleep-idle-seconds) is simply forwarded:
    // the request is what wakes it; holding it for an approval nobody can give would make it unreachable.
    if (view && (view.sleepLevel === 1 || view.sleepLevel === 2) && view.sleepControl !== 'automatic') return this.sleeping(spec, view.sleepLevel);
    // Its model list answers while it loads (so the tunnel probe passes); everything else is a 503.
    if (view?.health === 'loading') return this.loading(spec, view);
    let client: UpstreamClient;
    try {
      client = this.fleet.upstream(upstreamKey(spec.label, spec.serviceId));
    } catch (err) {
      return {
        ok: false,
        code: 'tunnel_down',
        message: `no tunnel to ${spec.key}: ${toAppError(err).message}`,
        retryAfterS: Math.ceil(CONNECT_MS / 1000) + 1,
        recovery: { reason: 'reconnecting', expectedMs: CONNECT_MS },
      };
    }
    const probe = view?.tunnel.probe;
    if (view?.tunnel.state === 'degraded' && probe && !probe.ok && probe.error?.code === FleetErrorCode.PROBE_TIMEOUT) {
      // Connected on paper, but the end-to-end probe got no answer in time: the link is presumed dead
      // until SSH's keepalive (or the console's own check) drops it; forwarding now would hang.
      return {
        ok: false,
        code: 'tunnel_down',
        message: `the tunnel to ${spec.key} does not answer (probe: ${probe.error.message}); SSH is being checked and will reconnect`,
        retryAfterS: Math.ceil(DEAD_LINK_RECOVERY_MS / 1000),
        recovery: { reason: 'reconnecting', expectedMs: DEAD_LINK_RECOVERY_MS },
      };
    }
    return { ok: true, url: client.target, client, degraded: view?.tunnel.state === 'degraded' };
  }

  private hostDown(host: HostState, spec: UpstreamSpec): Unavailable {
    const { state, lastError, nextRetryAt, trustProblem } = host.session;
    const err = lastError ? ` (${lastError.code}: ${lastError.message})` : '';
    switch (state) {
      case 'connecting':
      case 'reconnecting': {
        const wait = nextRetryAt !== null ? Math.max(0, nextRetryAt - this.clock.now()) : 0;
        if (host.session.recovery?.outlook === 'hard') return this.notExpectedBack(host, spec, host.session.recovery, wait);
        const expectedMs = wait + CONNECT_MS;
        return {
          ok: false,
          code: 'tunnel_down',
          message: `SSH to ${host.label} is ${state}${err}; ${spec.key} is back when it reconnects${nextRetryAt !== null ? ` (next attempt in ${Math.ceil(wait / 1000)} s)` : ''}`,
          retryAfterS: Math.max(1, Math.ceil(expectedMs / 1000)),
          recovery: { reason: 'reconnecting', expectedMs },
          extra: { host_state: state, next_retry_at: nextRetryAt },
        };
      }
      case 'awaiting-trust':
        return {
          ok: false,
          code: 'host_awaiting_trust',
          message: `${host.label}'s host key is not trusted yet: a person must confirm its fingerprint in GPU Console before ${spec.key} can be reached`,
          retryAfterS: ACTION_REQUIRED_RETRY_S,
          recovery: null,
          actionRequired: true,
          extra: { host_state: state },
        };
      case 'failed': {
        const changed = trustProblem && trustProblem.status !== 'unknown';
        return changed
          ? {
              ok: false,
              code: 'host_key_changed',
              message: `HOST KEY CHANGED for ${host.label} (${trustProblem.status}): the console refuses to connect until a person checks the host and forgets the old key`,
              retryAfterS: ACTION_REQUIRED_RETRY_S,
              recovery: null,
              actionRequired: true,
              extra: { host_state: state },
            }
          : {
              ok: false,
              code: 'host_failed',
              message: `SSH to ${host.label} failed${err} and will not retry by itself: a person must fix it in GPU Console`,
              retryAfterS: ACTION_REQUIRED_RETRY_S,
              recovery: null,
              actionRequired: true,
              extra: { host_state: state },
            };
      }
      default:
        return {
          ok: false,
          code: 'tunnel_down',
          message: `${host.label} is disconnected in GPU Console: a person must connect it again before ${spec.key} can be reached`,
          retryAfterS: ACTION_REQUIRED_RETRY_S,
          recovery: null,
          actionRequired: true,
          extra: { host_state: state },
        };
    }
  }

  /**
   * SSH keeps trying, but its last failure does not pass by itself (sshd refuses connections, a
   * login or host key failed, too many failures in a row): refused at once, not held, with
   * Retry-After = the next attempt (an attempt running now: its handshake). No person is asked
   * to act: a restarted sshd is found by the next attempt.
   */
  private notExpectedBack(host: HostState, spec: UpstreamSpec, rec: RecoveryExpectation, waitMs: number): Unavailable {
    const { state, lastError, nextRetryAt } = host.session;
    const why = rec.hardBecause === 'repeated' ? `${rec.failuresInRow} attempts in a row failed` : `its last attempt failed: ${rec.lastFailure}`;
    const err = lastError ? ` (${lastError.code}: ${lastError.message})` : '';
    const untilMs = nextRetryAt !== null ? waitMs : CONNECT_MS;
    return {
      ok: false,
      code: 'tunnel_down',
      message: `SSH to ${host.label} is ${state} and not expected back by itself (${why})${err}; ${spec.key} is not held — ${nextRetryAt !== null ? `next attempt in ${Math.ceil(waitMs / 1000)} s` : 'an attempt is running'}`,
      retryAfterS: Math.max(1, Math.ceil(untilMs / 1000)),
      recovery: null,
      extra: { host_state: state, next_retry_at: nextRetryAt, recovery_expected: false, link_failure: rec.hardBecause, failures_in_row: rec.failuresInRow },
    };
  }

  /**
   * The server answers that it is loading its model (llama-server /health 503 "Loading model": a
   * restart, a crash brought back): not ready, and back by itself — a request may wait for it.
   */
  private loading(spec: UpstreamSpec, view: ServiceState): Unavailable {
    let measuredMs: number | null = null;
    try {
      measuredMs = this.estimates.expectedRestartMs?.(spec.key) ?? null;
    } catch (err) {
      this.logger.warn('restart estimate failed', { upstream: spec.key, error: toAppError(err).message });
    }
    const loadingForMs = view.loadingSince == null ? 0 : Math.max(0, this.clock.now() - view.loadingSince);
    const expectedMs = Math.max(1_000, (measuredMs ?? DEFAULT_LOAD_MS) - loadingForMs);
    return {
      ok: false,
      code: 'model_restarting',
      message: `${spec.key} is loading its model (its /health answers 503 "Loading model"); it takes requests once loaded`,
      retryAfterS: Math.max(1, Math.ceil(expectedMs / 1000)),
      recovery: { reason: 'restarting', expectedMs },
      extra: { loading_since: view.loadingSince ?? null, load_estimate: measuredMs === null ? 'default' : 'measured' },
    };
  }

  private sleeping(spec: UpstreamSpec, level: 1 | 2): Unavailable {
    let wakeMs: number | null = null;
    let measured = false;
    try {
      wakeMs = this.estimates.expectedWakeMs(spec.key);
      measured = this.estimates.wasMeasured?.(spec.key) ?? false;
    } catch (err) {
      this.logger.warn('wake estimate failed', { upstream: spec.key, error: toAppError(err).message });
    }
    const expectedMs = measured && wakeMs !== null ? wakeMs : DEFAULT_WAKE_MS[level];
    let wakeable = false;
    try {
      wakeable = this.wakePolicy?.allowed(spec.key) ?? false;
    } catch (err) {
      this.logger.warn('wake-on-request check failed', { upstream: spec.key, error: toAppError(err).message });
    }
    return {
      ok: false,
      code: 'model_sleeping',
      message: wakeable
        ? `${spec.model} is asleep (level ${level}); a standing approval lets this request wake it`
        : `${spec.model} is asleep (level ${level}); waking it needs an operator's approval in GPU Console`,
      retryAfterS: Math.max(1, Math.ceil(expectedMs / 1000)),
      recovery: wakeable ? { reason: 'waking', expectedMs } : null,
      actionRequired: !wakeable,
      extra: { sleep_level: level, expected_wake_ms: expectedMs, wake_estimate: measured ? 'measured' : 'default' },
    };
  }
}
