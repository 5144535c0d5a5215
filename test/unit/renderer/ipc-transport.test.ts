// The Electron transport parses each event once and fans it out: one bridge
// subscription per event channel, however many listeners the page has. A call
// with a signal carries an id; aborting it rejects at once and sends cancel(id).
// Ticks arrive delta-coded (main's TickStreamEncoder per window): decoded here,
// a keyframe asked for with resync(channel) when the page holds no state.
import { describe, expect, it } from 'vitest';
import { BridgeErrorCode, TickStreamEncoder, type InvokeResult } from '../../../src-preload/contract/index.js';
import { IpcTransport, type GpuConsoleBridge } from '../../../src-renderer/src/transport/ipc-transport.js';
import { TransportError } from '../../../src-renderer/src/transport/transport.js';
import { host, snapshot } from './fixtures/fleet.js';

class FakeBridge implements GpuConsoleBridge {
  readonly subscriptions = new Map<string, Set<(payload: unknown) => void>>();
  readonly cancels: string[] = [];
  readonly resyncs: string[] = [];
  invoke(_channel: string, _input: unknown, _callId?: string): Promise<InvokeResult<unknown>> {
    return Promise.resolve({ ok: true, data: {} });
  }
  cancel(callId: string): void {
    this.cancels.push(callId);
  }
  resync(channel: string): void {
    this.resyncs.push(channel);
  }
  on(event: string, listener: (payload: unknown) => void): () => void {
    const set = this.subscriptions.get(event) ?? new Set();
    this.subscriptions.set(event, set);
    set.add(listener);
    return () => set.delete(listener);
  }
  emit(event: string, payload: unknown): void {
    for (const l of this.subscriptions.get(event) ?? []) l(payload);
  }
  count(event: string): number {
    return this.subscriptions.get(event)?.size ?? 0;
  }
}

describe('IpcTransport events', () => {
  it('decodes delta ticks to full ones, keeps unchanged hosts by identity, and asks main for a keyframe when it holds no state', () => {
    const bridge = new FakeBridge();
    const reports: string[] = [];
    const transport = new IpcTransport(bridge, (m) => reports.push(m));
    const encoder = new TickStreamEncoder();
    // main sent the first tick before the page listened: the page sees a delta first
    encoder.encode('fleet.tick', snapshot(1, [host('a'), host('b')]));
    const got: Array<ReturnType<typeof snapshot>> = [];
    transport.on('fleet.tick', (p) => got.push(p));
    bridge.emit('fleet.tick', structuredClone(encoder.encode('fleet.tick', snapshot(2, [host('a'), host('b')]))));
    expect(got).toEqual([]);
    expect(bridge.resyncs).toEqual(['fleet.tick']);
    expect(reports).toEqual([]); // waiting for the first keyframe is not a problem

    encoder.resync('fleet.tick'); // what main does on IPC_RESYNC
    bridge.emit('fleet.tick', structuredClone(encoder.encode('fleet.tick', snapshot(3, [host('a'), host('b')]))));
    const b4 = host('b', { state: 'reconnecting' });
    bridge.emit('fleet.tick', structuredClone(encoder.encode('fleet.tick', snapshot(4, [host('a'), b4]))));
    expect(got).toEqual([snapshot(3, [host('a'), host('b')]), snapshot(4, [host('a'), b4])]);
    expect(got[1]!.hosts[0]).toBe(got[0]!.hosts[0]);
    expect(got[1]!.hosts[1]).not.toBe(got[0]!.hosts[1]);
    expect(bridge.resyncs).toEqual(['fleet.tick']);

    // a tick lost between main and the page (out of step): reported, nothing emitted, resync again
    encoder.encode('fleet.tick', snapshot(5, [host('a')]));
    bridge.emit('fleet.tick', structuredClone(encoder.encode('fleet.tick', snapshot(6, [host('a')]))));
    expect(got).toHaveLength(2);
    expect(reports).toEqual(['fleet.tick: a delta on #4, but the state held is #3']);
    expect(bridge.resyncs).toEqual(['fleet.tick', 'fleet.tick']);
    transport.dispose();
  });

  it('forgets a channel\'s state when its last listener goes, so a later listener starts from a keyframe', () => {
    const bridge = new FakeBridge();
    const reports: string[] = [];
    const transport = new IpcTransport(bridge, (m) => reports.push(m));
    const encoder = new TickStreamEncoder();
    const tick = (at: number, v: number) => ({ at, hosts: [{ host: 'a', staleReason: null, values: { 'gpu.0.util_pct': v } }] });
    const seen: number[] = [];
    const off = transport.on('telemetry.tick', (t) => seen.push(t.hosts[0]!.values['gpu.0.util_pct']!));
    bridge.emit('telemetry.tick', encoder.encode('telemetry.tick', tick(1, 10)));
    off();
    bridge.emit('telemetry.tick', encoder.encode('telemetry.tick', tick(2, 20))); // nobody listens: unread
    transport.on('telemetry.tick', (t) => seen.push(t.hosts[0]!.values['gpu.0.util_pct']!));
    // the state of #0 was dropped with the last listener: a plain wait for a keyframe, not an out-of-step report
    bridge.emit('telemetry.tick', encoder.encode('telemetry.tick', tick(3, 30)));
    expect(seen).toEqual([10]);
    expect(reports).toEqual([]);
    expect(bridge.resyncs).toEqual(['telemetry.tick']);
    encoder.resync('telemetry.tick');
    bridge.emit('telemetry.tick', encoder.encode('telemetry.tick', tick(4, 40)));
    expect(seen).toEqual([10, 40]);
    transport.dispose();
  });

  it('subscribes to the bridge once per channel, parses once, and gives every listener the same parsed payload', () => {
    const bridge = new FakeBridge();
    const reports: string[] = [];
    const transport = new IpcTransport(bridge, (m) => reports.push(m));
    const got: unknown[][] = [[], []];
    const offA = transport.on('fleet.tick', (p) => got[0]!.push(p));
    const offB = transport.on('fleet.tick', (p) => got[1]!.push(p));
    expect(bridge.count('fleet.tick')).toBe(1);

    const tick = snapshot(1000, [host('a')]);
    bridge.emit('fleet.tick', structuredClone(new TickStreamEncoder().encode('fleet.tick', tick)));
    expect(got[0]).toEqual([tick]);
    expect(got[1]![0]).toBe(got[0]![0]);

    bridge.emit('fleet.tick', { kind: 'key', seq: 1, state: { at: 'nope', hosts: [] } });
    expect(got[0]).toHaveLength(1);
    expect(reports).toEqual([expect.stringMatching(/^fleet\.tick: state\.at:/)]);
    expect(bridge.resyncs).toEqual(['fleet.tick']);

    offA();
    offA();
    expect(bridge.count('fleet.tick')).toBe(1);
    offB();
    expect(bridge.count('fleet.tick')).toBe(0);
  });

  it('keeps the other listeners when one throws, and dispose drops every bridge subscription', () => {
    const bridge = new FakeBridge();
    const reports: string[] = [];
    const transport = new IpcTransport(bridge, (m) => reports.push(m));
    const seen: string[] = [];
    transport.on('notifications.open', () => {
      throw new Error('boom');
    });
    transport.on('notifications.open', (p) => seen.push(p.route));
    transport.on('report.progress', () => undefined);
    bridge.emit('notifications.open', { route: 'actions' });
    expect(seen).toEqual(['actions']);
    expect(reports).toEqual(['notifications.open listener failed: boom']);

    transport.dispose();
    expect(bridge.count('notifications.open') + bridge.count('report.progress')).toBe(0);
  });
});

const INFO = { name: 'GPU Console', version: '1.0.0', mode: 'electron', demo: true, dataDir: '/d', configFile: null, configError: null, proxyUrl: null, startedAt: 1 };

/** A bridge whose calls stay pending until the test answers them (main still working). */
class PendingBridge extends FakeBridge {
  readonly sent: Array<{ channel: string; input: unknown; callId: string | undefined; answer(r: InvokeResult<unknown>): void; fail(e: Error): void }> = [];
  override invoke(channel: string, input: unknown, callId?: string): Promise<InvokeResult<unknown>> {
    return new Promise((resolve, reject) => this.sent.push({ channel, input, callId, answer: resolve, fail: reject }));
  }
}

describe('IpcTransport cancellation', () => {
  it('sends no call id without a signal, and an id from newCallId with one', async () => {
    const bridge = new PendingBridge();
    const transport = new IpcTransport(bridge, () => undefined, () => 'call-1');
    const plain = transport.invoke('app.info', {});
    const signal = new AbortController().signal;
    const withSignal = transport.invoke('app.info', {}, { signal });
    expect(bridge.sent.map((s) => s.callId)).toEqual([undefined, 'call-1']);
    bridge.sent[0]!.answer({ ok: true, data: INFO });
    bridge.sent[1]!.answer({ ok: true, data: INFO });
    await expect(plain).resolves.toMatchObject({ version: '1.0.0' });
    await expect(withSignal).resolves.toMatchObject({ version: '1.0.0' });
    expect(bridge.cancels).toEqual([]);
  });

  it('on abort rejects at once with BRIDGE_CANCELLED, sends cancel(id) once, and drops the late answer', async () => {
    const bridge = new PendingBridge();
    const transport = new IpcTransport(bridge, () => undefined, () => 'call-7');
    const abort = new AbortController();
    const call = transport.invoke('reports.export', { request: { fromMs: 0, toMs: 1 }, formats: ['md'] }, { signal: abort.signal });
    expect(bridge.sent[0]).toMatchObject({ channel: 'reports.export', callId: 'call-7' });
    abort.abort();
    abort.abort();
    const error = await call.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TransportError);
    expect(error).toMatchObject({ code: BridgeErrorCode.CANCELLED, retryable: false, details: { channel: 'reports.export' } });
    expect(bridge.cancels).toEqual(['call-7']);
    // Main answers later (REPORT_CANCELLED): nobody sees it, nothing is unhandled.
    bridge.sent[0]!.answer({ ok: false, error: { code: 'REPORT_CANCELLED', message: 'the report was cancelled', retryable: false, details: {} } });
    await Promise.resolve();
    expect(bridge.cancels).toEqual(['call-7']);
  });

  it('does not reach the bridge with an already aborted signal, and never cancels a settled call', async () => {
    const bridge = new PendingBridge();
    const transport = new IpcTransport(bridge, () => undefined, () => 'call-9');
    await expect(transport.invoke('app.info', {}, { signal: AbortSignal.abort() })).rejects.toMatchObject({ code: BridgeErrorCode.CANCELLED });
    expect(bridge.sent).toHaveLength(0);

    const abort = new AbortController();
    const call = transport.invoke('app.info', {}, { signal: abort.signal });
    bridge.sent[0]!.answer({ ok: true, data: INFO });
    await expect(call).resolves.toMatchObject({ version: '1.0.0' });
    abort.abort();
    expect(bridge.cancels).toEqual([]);
  });

  it('still rejects as cancelled when the bridge cannot send the cancel, and reports it', async () => {
    const bridge = new PendingBridge();
    bridge.cancel = () => {
      throw new Error('ipc closed');
    };
    const reports: string[] = [];
    const transport = new IpcTransport(bridge, (m) => reports.push(m), () => 'call-3');
    const abort = new AbortController();
    const call = transport.invoke('app.info', {}, { signal: abort.signal });
    abort.abort();
    await expect(call).rejects.toMatchObject({ code: BridgeErrorCode.CANCELLED });
    expect(reports).toEqual(['app.info: cancel failed: ipc closed']);
    bridge.sent[0]!.fail(new Error('late failure'));
    await Promise.resolve();
  });
});
