import { describe, expect, it } from 'vitest';
import type { AppInfo, ChannelInput, ChannelOutput, EventChannel, EventPayload, InvokeChannel } from '../../../src-preload/contract/index.js';
import { createAppStore } from '../../../src-renderer/src/store/store.js';
import { wireTransport } from '../../../src-renderer/src/store/wire.js';
import type { ConnectionState, Transport } from '../../../src-renderer/src/transport/transport.js';
import { host, snapshot } from './fixtures/fleet.js';

const INFO: AppInfo = {
  name: 'GPU Console',
  version: '0.1.0',
  mode: 'electron',
  demo: false,
  dataDir: '/d',
  configFile: null,
  configError: null,
  proxyUrl: 'http://127.0.0.1:8088/v1',
  startedAt: 0,
};

class FakeTransport implements Transport {
  readonly kind = 'web' as const;
  readonly invoked: string[] = [];
  private readonly listeners = new Map<string, (payload: unknown) => void>();
  private connection: ((s: ConnectionState) => void) | null = null;
  snapshotAt = 1000;

  invoke<C extends InvokeChannel>(channel: C, _input: ChannelInput<C>): Promise<ChannelOutput<C>> {
    this.invoked.push(channel);
    if (channel === 'app.info') return Promise.resolve(INFO as ChannelOutput<C>);
    if (channel === 'fleet.snapshot') return Promise.resolve(snapshot(this.snapshotAt, [host('a')]) as ChannelOutput<C>);
    return Promise.reject(new Error(`unexpected ${channel}`));
  }
  on<E extends EventChannel>(event: E, listener: (payload: EventPayload<E>) => void): () => void {
    this.listeners.set(event, listener as (payload: unknown) => void);
    return () => this.listeners.delete(event);
  }
  emit<E extends EventChannel>(event: E, payload: EventPayload<E>): void {
    this.listeners.get(event)?.(payload);
  }
  onConnection(listener: (s: ConnectionState) => void): () => void {
    this.connection = listener;
    listener({ status: 'connecting', attempt: 0, nextRetryAt: null, lastError: null });
    return () => (this.connection = null);
  }
  setConnection(s: ConnectionState): void {
    this.connection?.(s);
  }
  get listenerCount(): number {
    return this.listeners.size;
  }
  dispose(): void {}
}

const flush = (): Promise<void> => new Promise((r) => setTimeout(r, 0));

describe('wireTransport', () => {
  it('loads info and snapshot, applies events, re-reads after a reconnect, and unsubscribes', async () => {
    const transport = new FakeTransport();
    const store = createAppStore({ transportKind: 'web' });
    const off = wireTransport(transport, store);
    await flush();
    expect(store.getState().app.info?.proxyUrl).toBe('http://127.0.0.1:8088/v1');
    expect(store.getState().fleet.snapshot?.at).toBe(1000);

    transport.emit('fleet.tick', snapshot(2000, [host('a', { state: 'reconnecting' })]));
    expect(store.getState().fleet.snapshot?.hosts[0]?.state).toBe('reconnecting');
    transport.emit('host.status', { label: 'a', state: 'failed', message: 'gone' });
    expect(store.getState().fleet.snapshot?.hosts[0]?.state).toBe('failed');
    transport.emit('config.changed', { ok: false, error: { code: 'CONFIG_INVALID', message: 'x', retryable: false, details: {} } });
    expect(store.getState().app.info?.configError?.code).toBe('CONFIG_INVALID');

    transport.setConnection({ status: 'lost', attempt: 1, nextRetryAt: 5, lastError: 'reset' });
    expect(store.getState().app.connection.status).toBe('lost');
    transport.snapshotAt = 3000;
    transport.setConnection({ status: 'open', attempt: 0, nextRetryAt: null, lastError: null });
    await flush();
    expect(transport.invoked.filter((c) => c === 'fleet.snapshot')).toHaveLength(2);
    expect(store.getState().fleet.snapshot?.at).toBe(3000);

    off();
    expect(transport.listenerCount).toBe(0);
  });

  it('feeds the actions, bench, reports and notifications slices from their events', async () => {
    const transport = new FakeTransport();
    const store = createAppStore({ transportKind: 'web' });
    const off = wireTransport(transport, store);
    await flush();
    const s = () => store.getState();
    transport.emit('bench.progress', {
      runId: 'r1',
      name: 'n',
      state: 'completed',
      phase: 'level',
      level: 1,
      levelIndex: 0,
      levelCount: 1,
      done: 4,
      total: 4,
      errors: 0,
      elapsedMs: 10,
      etaMs: null,
      message: null,
    });
    expect(s().bench.progress?.state).toBe('completed');
    transport.emit('report.progress', { exportId: 'e1', step: 'html', done: 2, total: 3, state: 'running', message: null });
    expect(s().reports.progress?.step).toBe('html');
    transport.emit('action.standing', { id: 'sa_111111', kind: 'wake', upstream: 'a/q', grantedBy: 'x', grantedAt: 1, expiresAt: 2, revokedAt: null, uses: 0 });
    expect(s().actions.standing.map((x) => x.id)).toEqual(['sa_111111']);
    transport.emit('notifications.notice', { id: 7, key: 'k', severity: 'warning', title: 't', body: 'b', route: 'actions', at: 1, outcome: 'sent' });
    expect(s().notifications.items.map((n) => n.id)).toEqual([7]);
    expect(s().notifications.unseen).toBe(1);
    transport.emit('notifications.open', { route: 'hosts/a' });
    expect(s().notifications.openRequest).toEqual({ route: 'hosts/a' });
    off();
    expect(transport.listenerCount).toBe(0);
  });
});
