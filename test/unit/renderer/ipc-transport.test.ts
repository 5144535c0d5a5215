// The Electron transport parses each event once and fans it out: one bridge
// subscription per event channel, however many listeners the page has.
import { describe, expect, it } from 'vitest';
import type { InvokeResult } from '../../../src-preload/contract/index.js';
import { IpcTransport, type GpuConsoleBridge } from '../../../src-renderer/src/transport/ipc-transport.js';
import { host, snapshot } from './fixtures/fleet.js';

class FakeBridge implements GpuConsoleBridge {
  readonly subscriptions = new Map<string, Set<(payload: unknown) => void>>();
  invoke(): Promise<InvokeResult<unknown>> {
    return Promise.resolve({ ok: true, data: {} });
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
  it('subscribes to the bridge once per channel, parses once, and gives every listener the same parsed payload', () => {
    const bridge = new FakeBridge();
    const reports: string[] = [];
    const transport = new IpcTransport(bridge, (m) => reports.push(m));
    const got: unknown[][] = [[], []];
    const offA = transport.on('fleet.tick', (p) => got[0]!.push(p));
    const offB = transport.on('fleet.tick', (p) => got[1]!.push(p));
    expect(bridge.count('fleet.tick')).toBe(1);

    const tick = snapshot(1000, [host('a')]);
    bridge.emit('fleet.tick', JSON.parse(JSON.stringify(tick)));
    expect(got[0]).toEqual([tick]);
    expect(got[1]![0]).toBe(got[0]![0]);

    bridge.emit('fleet.tick', { at: 'nope', hosts: [] });
    expect(got[0]).toHaveLength(1);
    expect(reports).toEqual([expect.stringMatching(/^fleet\.tick: at:/)]);

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
