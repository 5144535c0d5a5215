import { describe, expect, it } from 'vitest';
import { FakeClock, silentLogger } from '../../../../src-main/core/base/index.js';
import type { FleetService, HostState } from '../../../../src-main/core/fleet/index.js';
import { FleetResolver } from '../../../../src-main/core/proxy/fleet-resolver.js';
import type { UpstreamSpec } from '../../../../src-main/core/proxy/registry.js';
import type { Unavailable } from '../../../../src-main/core/proxy/resolver.js';
import { clientTimeoutMs, holdLeftMs, parseTimeoutSeconds, worthHolding } from '../../../../src-main/core/proxy/stages/hold-limit.js';
import { expectRecovery, type LinkFailureKind } from '../../../../src-main/core/ssh/index.js';
import { hostStateFromView } from '../../../helpers/fleet-state.js';
import { hostView, serviceView } from '../../../integration/proxy/fake-fleet.js';

// The hold decision (issue #33 item 1): a request waits for a reconnect only
// while the link's last failure passes by itself and the next attempt falls
// within what is left of its class budget and of the client's own timeout;
// otherwise it is refused at once with Retry-After = the next attempt.

describe('the client\'s stated timeout', () => {
  it.each([
    ['30', 30_000],
    ['600', 600_000],
    ['0.5', 500],
    // openai-node sends whole seconds: 0 for a timeout under one.
    ['0', 0],
  ])('%s s is taken', (value, ms) => {
    expect(parseTimeoutSeconds(value)).toBe(ms);
  });

  it.each([[''], [' 30'], ['30 '], ['-1'], ['+5'], ['1e3'], ['30s'], ['Infinity'], ['NaN'], ['0x10'], ['5, 10'], ['1.'], ['.5'], ['9999999999']])('%j is ignored', (value) => {
    expect(parseTimeoutSeconds(value)).toBeNull();
  });

  it('a header sent twice (an array) is ignored, never guessed at', () => {
    expect(parseTimeoutSeconds(['5', '6'])).toBeNull();
  });

  it('the shortest of X-Stainless-Timeout, X-Stainless-Read-Timeout and X-Request-Timeout counts; bad ones are skipped', () => {
    expect(clientTimeoutMs({ 'x-stainless-timeout': '600', 'x-request-timeout': '20' })).toBe(20_000);
    expect(clientTimeoutMs({ 'x-stainless-read-timeout': '7.5', 'x-request-timeout': 'soon' })).toBe(7_500);
    expect(clientTimeoutMs({ 'x-timeout': '5' })).toBeNull();
  });

  it('caps the hold a second before the client gives up, never beyond the class budget, less what was held', () => {
    expect(holdLeftMs(45_000, {}, 0)).toBe(45_000);
    expect(holdLeftMs(45_000, { 'x-stainless-timeout': '30' }, 0)).toBe(29_000);
    expect(holdLeftMs(45_000, { 'x-request-timeout': '3600' }, 0)).toBe(45_000);
    expect(holdLeftMs(45_000, { 'x-request-timeout': '30' }, 10_000)).toBe(19_000);
    expect(holdLeftMs(45_000, { 'x-stainless-timeout': '0' }, 0)).toBe(0);
    expect(holdLeftMs(10_000, {}, 12_000)).toBe(0);
  });

  it('holds only for a recovery expected back within what is left', () => {
    expect(worthHolding({ reason: 'reconnecting', expectedMs: 7_900 }, 45_000)).toBe(true);
    expect(worthHolding({ reason: 'reconnecting', expectedMs: 7_900 }, 7_000)).toBe(false);
    expect(worthHolding(null, 45_000)).toBe(false);
    expect(worthHolding(undefined, 45_000)).toBe(false);
  });
});

describe('FleetResolver on the link\'s recovery expectation (fake clock)', () => {
  const spec = { key: 'gpu/m', label: 'gpu', serviceId: 'm', model: 'qwen' } as unknown as UpstreamSpec;
  const fleet = { upstream: () => { throw new Error('no tunnel'); } } as unknown as FleetService;

  function resolverWith(clock: FakeClock, failure: LinkFailureKind | null, failuresInRow: number, nextRetryAt: number | null) {
    const base = hostStateFromView(hostView('gpu', [serviceView('m')], { state: 'reconnecting' }), clock.now());
    const host: HostState = {
      ...base,
      session: {
        ...base.session,
        nextRetryAt,
        lastError: failure === 'refused' ? { code: 'SSH_CONNECT_FAILED', message: '127.0.0.1:22: ECONNREFUSED', at: clock.now() } : null,
        recovery: expectRecovery(failure, failuresInRow, nextRetryAt),
      },
    };
    const r = new FleetResolver(fleet, { expectedWakeMs: () => null }, null, clock, silentLogger);
    r.remember({ at: clock.now(), hosts: [host] });
    return r;
  }

  it('a dropped link with the next attempt in 6.4 s: held (expected back in the attempt plus a handshake)', () => {
    const clock = new FakeClock(1_000_000);
    const a = resolverWith(clock, 'dropped', 0, clock.now() + 6_400).resolve(spec) as Unavailable;
    expect(a).toMatchObject({ ok: false, code: 'tunnel_down', recovery: { reason: 'reconnecting', expectedMs: 7_900 } });
    expect(worthHolding(a.recovery, holdLeftMs(45_000, {}, 0))).toBe(true);
    // …but not for a client that gives up in 5 s.
    expect(worthHolding(a.recovery, holdLeftMs(45_000, { 'x-stainless-timeout': '5' }, 0))).toBe(false);
  });

  it('sshd refuses: not held, Retry-After = the next attempt, no person asked to act', () => {
    const clock = new FakeClock(1_000_000);
    const r = resolverWith(clock, 'refused', 1, clock.now() + 6_400);
    const a = r.resolve(spec) as Unavailable;
    expect(a).toMatchObject({ ok: false, code: 'tunnel_down', recovery: null, retryAfterS: 7 });
    expect(a.actionRequired).toBeFalsy();
    expect(a.extra).toMatchObject({ recovery_expected: false, link_failure: 'refused', failures_in_row: 1 });
    expect(worthHolding(a.recovery, holdLeftMs(1_800_000, {}, 0))).toBe(false);
    clock.advance(6_000);
    expect((r.resolve(spec) as Unavailable).retryAfterS).toBe(1);
    clock.advance(5_000);
    // Past the attempt's time: never 0.
    expect((r.resolve(spec) as Unavailable).retryAfterS).toBe(1);
  });

  it('three timeouts in a row: not held either; an attempt running now answers with its handshake time', () => {
    const clock = new FakeClock(1_000_000);
    const a = resolverWith(clock, 'timeout', 3, null).resolve(spec) as Unavailable;
    expect(a).toMatchObject({ recovery: null, retryAfterS: 2, extra: { link_failure: 'repeated', failures_in_row: 3 } });
    const b = resolverWith(clock, 'timeout', 2, null).resolve(spec) as Unavailable;
    expect(b.recovery).toMatchObject({ reason: 'reconnecting' });
  });
});
