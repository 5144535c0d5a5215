import { EventEmitter } from 'node:events';
import { PassThrough } from 'node:stream';
import type { Client, ConnectConfig } from 'ssh2';
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../../src-main/core/base/index.js';
import { SshConnection, type SshStateChange } from '../../../../src-main/core/ssh/index.js';
import { until } from '../../../helpers/until.js';

type Outcome = 'refused' | 'ready';

/** Plays ssh2's Client events for a scripted list of attempts. */
class ScriptedClient extends EventEmitter {
  config: ConnectConfig | null = null;
  constructor(private readonly outcome: Outcome) {
    super();
  }
  connect(config: ConnectConfig): this {
    this.config = config;
    queueMicrotask(() => {
      if (this.outcome === 'ready') this.emit('ready');
      else {
        this.emit('error', Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:22'), { level: 'client-socket', code: 'ECONNREFUSED' }));
        this.emit('close');
      }
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

const flush = async () => {
  // The attempt reads known_hosts from disk (real I/O), so give the loop a few real turns.
  for (let i = 0; i < 20; i++) await new Promise((r) => setTimeout(r, 1));
};

/** Real turns until a condition holds: on a loaded machine the attempt's file read can take longer than a fixed few turns. */
const REAL_TURNS = { timeoutMs: 5_000, intervalMs: 1 } as const;

function build(script: Outcome[]) {
  const clock = new FakeClock(1_000_000);
  const clients: ScriptedClient[] = [];
  const conn = new SshConnection(
    { label: 'h', ssh: { host: 'gpu', port: 22, user: 'ops', agent: true }, knownHostsFile: '/nonexistent/known_hosts' },
    {
      clock,
      env: { SSH_AUTH_SOCK: '/tmp/fake-agent.sock' },
      backoff: { random: () => 0.5 }, // no jitter: 1 s, 2 s, 4 s … capped at 30 s
      // No DNS, no sockets: the scripted client plays the whole exchange.
      services: { dialer: async () => new PassThrough() },
      clientFactory: () => {
        const c = new ScriptedClient(script[clients.length] ?? 'refused');
        clients.push(c);
        return c as unknown as Client;
      },
    },
  );
  const seen: SshStateChange[] = [];
  conn.onDidChangeState((s) => seen.push(s));
  return { clock, clients, conn, seen };
}

describe('SshConnection reconnect policy (fake clock, scripted client)', () => {
  it('backs off 1 s, 2 s, 4 s on refused connections, then resets after a success', async () => {
    const { clock, clients, conn, seen } = build(['refused', 'refused', 'refused', 'ready', 'refused']);
    await expect(conn.connect()).rejects.toMatchObject({ code: 'SSH_CONNECT_FAILED' });
    expect(conn.state).toBe('reconnecting');
    expect(conn.nextRetryAt).toBe(1_000_000 + 1_000);
    clock.advance(999);
    await flush();
    expect(clients).toHaveLength(1);
    clock.advance(1);
    await until(() => conn.nextRetryAt !== null && conn.nextRetryAt > clock.now(), { what: 'the second attempt to fail', ...REAL_TURNS });
    expect(clients).toHaveLength(2);
    expect(conn.nextRetryAt).toBe(clock.now() + 2_000);
    clock.advance(2_000);
    await until(() => conn.nextRetryAt !== null && conn.nextRetryAt > clock.now(), { what: 'the third attempt to fail', ...REAL_TURNS });
    expect(conn.nextRetryAt).toBe(clock.now() + 4_000);
    clock.advance(4_000);
    await until(() => conn.state === 'connected', { what: 'the fourth attempt to connect', ...REAL_TURNS });
    expect(conn.state).toBe('connected');
    expect(clients).toHaveLength(4);
    // keepalive and deadlines are passed to ssh2
    expect(clients[3]!.config).toMatchObject({ keepaliveInterval: 5_000, keepaliveCountMax: 2, readyTimeout: 15_000 });
    expect(typeof clients[3]!.config!.authHandler).toBe('function');
    expect(typeof clients[3]!.config!.hostVerifier).toBe('function');

    // An unexpected close starts again at 1 s.
    clients[3]!.emit('close');
    await until(() => conn.nextRetryAt !== null, { what: 'the close to schedule a retry', ...REAL_TURNS });
    expect(conn.state).toBe('reconnecting');
    expect(conn.lastError?.code).toBe('SSH_DISCONNECTED');
    expect(conn.nextRetryAt).toBe(clock.now() + 1_000);
    // Every failure that schedules a retry says when; the attempt itself runs as plain 'reconnecting'.
    expect(seen.filter((s) => s.state === 'reconnecting' && s.error).every((s) => typeof s.nextRetryAt === 'number')).toBe(true);

    // disconnect() at any moment cancels the pending retry.
    await conn.disconnect();
    expect(conn.state).toBe('disconnected');
    clock.advance(60_000);
    await flush();
    expect(clients).toHaveLength(4); // the pending retry never ran
    expect(clock.pending).toBe(0);
    await conn.dispose();
  });

  it('caps the delay at 30 s', async () => {
    const { clock, conn } = build([]);
    await conn.connect().catch(() => undefined);
    const delays: number[] = [];
    for (let i = 0; i < 8; i++) {
      delays.push(conn.nextRetryAt! - clock.now());
      clock.advance(conn.nextRetryAt! - clock.now());
      // The attempt runs and fails; the next retry is then scheduled in the future again.
      await until(() => conn.nextRetryAt !== null && conn.nextRetryAt > clock.now(), { what: `retry ${i + 2} to be scheduled`, ...REAL_TURNS });
    }
    expect(delays).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000]);
    await conn.dispose();
  });
});
