import { EventEmitter } from 'node:events';
import { PassThrough } from 'node:stream';
import type { Client } from 'ssh2';
import { describe, expect, it } from 'vitest';
import { AppError, FakeClock } from '../../../../src-main/core/base/index.js';
import { SshConnection, SshErrorCode, expectRecovery, failureKindOf, type RecoveryExpectation, type SshStateChange } from '../../../../src-main/core/ssh/index.js';
import { classifyStderr } from '../../../../src-main/core/ssh/openssh-config.js';
import { until } from '../../../helpers/until.js';

// The link's recovery expectation (issue #33 item 1): a refused connection, a
// failed login or a key problem is not expected back by itself; timeouts,
// resets and a dropped link are, until N attempts in a row failed. The proxy
// holds on this typed expectation, published with each state change.

describe('failureKindOf', () => {
  const e = (code: string, details: Record<string, unknown> = {}) => new AppError(code as SshErrorCode, 'x', { retryable: true, details });
  it.each([
    [e(SshErrorCode.CONNECT_FAILED, { errno: 'ECONNREFUSED' }), 'refused'],
    [e(SshErrorCode.CONNECT_FAILED, { errno: 'ECONNRESET' }), 'reset'],
    [e(SshErrorCode.CONNECT_FAILED, { errno: 'EHOSTUNREACH' }), 'unreachable'],
    [e(SshErrorCode.CONNECT_FAILED, { errno: 'ENETUNREACH' }), 'unreachable'],
    [e(SshErrorCode.CONNECT_FAILED, { errno: 'EADDRNOTAVAIL' }), 'other'],
    // The peer closed the connection during the handshake.
    [e(SshErrorCode.CONNECT_FAILED), 'reset'],
    [e(SshErrorCode.TIMEOUT), 'timeout'],
    [e(SshErrorCode.DISCONNECTED), 'dropped'],
    [e(SshErrorCode.HOST_UNRESOLVED), 'unresolved'],
    [e(SshErrorCode.JUMP_FAILED, { causeCode: SshErrorCode.TIMEOUT }), 'timeout'],
    [e(SshErrorCode.JUMP_FAILED, { causeCode: SshErrorCode.FORWARD_FAILED }), 'refused'],
    [e(SshErrorCode.AUTH_FAILED), 'auth'],
    [e(SshErrorCode.PASSPHRASE_INCORRECT), 'auth'],
    [e(SshErrorCode.HOST_KEY_CHANGED), 'host-key'],
    [e(SshErrorCode.HOST_KEY_UNKNOWN), 'host-key'],
    [e(SshErrorCode.OPENSSH_CONFIG_INVALID), 'other'],
  ])('%s → %s', (err, kind) => {
    expect(failureKindOf(err)).toBe(kind);
  });

  it('the openssh transport records the same errno from ssh\'s words', () => {
    expect(failureKindOf(classifyStderr('ssh: connect to host 10.0.0.2 port 22: Connection refused', 'gpu')!)).toBe('refused');
    expect(failureKindOf(classifyStderr('ssh: connect to host 10.0.0.2 port 22: No route to host', 'gpu')!)).toBe('unreachable');
    expect(failureKindOf(classifyStderr('kex_exchange_identification: Connection closed by remote host', 'gpu')!)).toBe('reset');
    expect(failureKindOf(classifyStderr('ssh: connect to host 10.0.0.2 port 22: Connection timed out', 'gpu')!)).toBe('timeout');
  });
});

describe('expectRecovery', () => {
  it('transient kinds stay transient below the limit; hard kinds are hard at once', () => {
    expect(expectRecovery('timeout', 2, 5_000, 3)).toMatchObject({ outlook: 'transient', hardBecause: null, nextAttemptAt: 5_000 });
    expect(expectRecovery('timeout', 3, 5_000, 3)).toMatchObject({ outlook: 'hard', hardBecause: 'repeated' });
    expect(expectRecovery('dropped', 0, null, 3)).toMatchObject({ outlook: 'transient' });
    expect(expectRecovery('refused', 1, 5_000, 3)).toMatchObject({ outlook: 'hard', hardBecause: 'refused' });
    expect(expectRecovery('auth', 1, null, 3)).toMatchObject({ outlook: 'hard', hardBecause: 'auth' });
    // Nothing failed yet (the first attempt runs).
    expect(expectRecovery(null, 0, null)).toMatchObject({ outlook: 'transient', lastFailure: null });
  });
});

type Outcome = 'refused' | 'timeout' | 'reset' | 'ready';

/** Plays ssh2's Client events for a scripted list of attempts. */
class ScriptedClient extends EventEmitter {
  constructor(private readonly outcome: Outcome) {
    super();
  }
  connect(): this {
    queueMicrotask(() => {
      if (this.outcome === 'ready') return void this.emit('ready');
      const err =
        this.outcome === 'refused'
          ? Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:22'), { level: 'client-socket', code: 'ECONNREFUSED' })
          : this.outcome === 'reset'
            ? Object.assign(new Error('read ECONNRESET'), { level: 'client-socket', code: 'ECONNRESET' })
            : Object.assign(new Error('Timed out while waiting for handshake'), { level: 'client-timeout' });
      this.emit('error', err);
      this.emit('close');
    });
    return this;
  }
  end(): this {
    queueMicrotask(() => this.emit('close'));
    return this;
  }
  destroy(): this {
    return this.end();
  }
}

const REAL_TURNS = { timeoutMs: 5_000, intervalMs: 1 } as const;

function build(script: Outcome[], transientFailuresMax?: number) {
  const clock = new FakeClock(1_000_000);
  const clients: ScriptedClient[] = [];
  const conn = new SshConnection(
    { label: 'h', ssh: { host: 'gpu', port: 22, user: 'ops', agent: true }, knownHostsFile: '/nonexistent/known_hosts' },
    {
      clock,
      env: { SSH_AUTH_SOCK: '/tmp/fake-agent.sock' },
      backoff: { random: () => 0.5 },
      transientFailuresMax,
      services: { dialer: async () => new PassThrough() },
      clientFactory: () => {
        const c = new ScriptedClient(script[clients.length] ?? 'refused');
        clients.push(c);
        return c as unknown as Client;
      },
    },
  );
  // What a listener sees at the moment of each change (the fleet publishes from inside it).
  const seen: Array<{ change: SshStateChange; recovery: RecoveryExpectation | null }> = [];
  conn.onDidChangeState((change) => seen.push({ change, recovery: conn.recovery ?? null }));
  return { clock, clients, conn, seen };
}

/** Runs the pending retry and waits for its attempt to fail (a new retry scheduled) or connect. */
async function nextAttempt(clock: FakeClock, conn: SshConnection): Promise<void> {
  clock.advance(conn.nextRetryAt! - clock.now());
  await until(() => conn.state === 'connected' || (conn.nextRetryAt !== null && conn.nextRetryAt > clock.now()), { what: 'the attempt to end', ...REAL_TURNS });
}

describe('SshConnection.recovery (fake clock, scripted client)', () => {
  it('a refused connection is hard at once, in the very change that reports it, with the next attempt', async () => {
    const { clock, conn, seen } = build(['refused']);
    await expect(conn.connect()).rejects.toMatchObject({ code: SshErrorCode.CONNECT_FAILED });
    const failed = seen.find((s) => s.change.state === 'reconnecting' && s.change.error);
    expect(failed?.recovery).toEqual({ outlook: 'hard', lastFailure: 'refused', failuresInRow: 1, hardBecause: 'refused', nextAttemptAt: clock.now() + 1_000 });
    await conn.dispose();
  });

  it('timeouts are transient until the third in a row; a success clears it; a dropped link starts transient', async () => {
    const { clock, conn } = build(['timeout', 'timeout', 'timeout', 'ready', 'reset']);
    await conn.connect().catch(() => undefined);
    expect(conn.recovery).toMatchObject({ outlook: 'transient', lastFailure: 'timeout', failuresInRow: 1 });
    await nextAttempt(clock, conn);
    expect(conn.recovery).toMatchObject({ outlook: 'transient', failuresInRow: 2, nextAttemptAt: clock.now() + 2_000 });
    await nextAttempt(clock, conn);
    expect(conn.recovery).toMatchObject({ outlook: 'hard', hardBecause: 'repeated', failuresInRow: 3, nextAttemptAt: clock.now() + 4_000 });
    await nextAttempt(clock, conn);
    expect(conn.state).toBe('connected');
    expect(conn.recovery).toBeNull();
    // The link drops: the drop itself is no failed attempt.
    const c = (conn as unknown as { client: EventEmitter }).client;
    c.emit('close');
    await until(() => conn.nextRetryAt !== null, { what: 'the drop to schedule a retry', ...REAL_TURNS });
    expect(conn.recovery).toMatchObject({ outlook: 'transient', lastFailure: 'dropped', failuresInRow: 0 });
    // The first reconnect is reset: still transient.
    await nextAttempt(clock, conn);
    expect(conn.recovery).toMatchObject({ outlook: 'transient', lastFailure: 'reset', failuresInRow: 1 });
    await conn.disconnect();
    expect(conn.recovery).toBeNull();
    await conn.dispose();
  });

  it('the limit is an option', async () => {
    const { conn } = build(['timeout'], 1);
    await conn.connect().catch(() => undefined);
    expect(conn.recovery).toMatchObject({ outlook: 'hard', hardBecause: 'repeated', failuresInRow: 1 });
    await conn.dispose();
  });
});
