import { describe, expect, it } from 'vitest';
import { engineFigure, mergeLoad } from '../../../../src-main/core/lifecycle/load.js';
import { ActionLoadSchema, type FleetSnapshot, type HostView, type ServiceView } from '../../../../src-preload/contract/index.js';
import { fleetStateOf } from '../../../helpers/fleet-state.js';

// The counts the approval dialog shows: the proxy's own and the engine's
// (which also sees clients on the SSH tunnel directly, and includes the
// proxy's). direct = max(0, engine running − proxy in flight); an engine
// figure that is old, failed or never read is said to be so, never taken for 0.

const NOW = 1_700_000_100_000;
const MAX_AGE_MS = 3_000;
const TARGET = { label: 'h1', serviceId: 'qwen' };

function snap(svc: Partial<ServiceView> = {}, host: Partial<HostView> = {}): FleetSnapshot {
  return {
    at: NOW,
    hosts: [{
      label: 'h1', address: 'a', state: 'connected', lastError: null, nextRetryAt: null, hostKeyFingerprint: null, gpuModel: null, pricePerHourUsd: null,
      gpus: [], gpuStale: false, gpuStaleReason: null, updatedAt: NOW,
      services: [{
        id: 'qwen', kind: 'vllm', model: 'Q', aliases: [], slots: 4, remotePort: 8000, tunnel: { state: 'up', localUrl: 'http://127.0.0.1:41000', lastError: null },
        health: 'ok', sleep: 'awake', requestsRunning: 0, requestsWaiting: 0, kvCachePct: 0, generationTokensPerS: 0, promptTokensPerS: 0,
        stale: false, staleReason: null, source: { kind: 'vllm', atMs: NOW - 500, detail: 'GET /metrics' },
        ...svc,
      }],
      ...host,
    }],
  };
}

const merged = (proxy: { inFlight: number; queued: number } | null, svc: Partial<ServiceView> = {}, host: Partial<HostView> = {}) => {
  const load = mergeLoad(proxy, engineFigure(fleetStateOf(snap(svc, host)), TARGET, NOW, MAX_AGE_MS), NOW);
  expect(ActionLoadSchema.safeParse(load).success).toBe(true); // what the contract carries
  return load;
};

describe('proxy and engine counts merged', () => {
  it('both: the engine counts the proxy requests too, the rest are direct tunnel clients', () => {
    const load = merged({ inFlight: 2, queued: 0 }, { requestsRunning: 3, requestsWaiting: 1 });
    expect(load).toMatchObject({ engine: 'fresh', proxyInFlight: 2, engineRunning: 3, engineWaiting: 1, direct: 1, inFlight: 3, engineNote: null });
    expect(load.summary).toBe('3 in flight (2 through the proxy, 1 from direct tunnel clients), 1 waiting at the engine');
  });

  it('proxy only: the engine reports exactly what the proxy sent, no direct clients; the proxy queue is named', () => {
    const load = merged({ inFlight: 2, queued: 3 }, { requestsRunning: 2, requestsWaiting: 0 });
    expect(load).toMatchObject({ direct: 0, inFlight: 2, proxyQueued: 3 });
    expect(load.summary).toBe('2 in flight (2 through the proxy, 0 from direct tunnel clients), 0 waiting at the engine, 3 queued in the proxy');
  });

  it('engine only: nothing through the proxy (or no proxy at all), all of it direct', () => {
    expect(merged({ inFlight: 0, queued: 0 }, { requestsRunning: 4, requestsWaiting: 2 })).toMatchObject({ direct: 4, inFlight: 4, proxyInFlight: 0 });
    const noProxy = merged(null, { requestsRunning: 4, requestsWaiting: 2 });
    expect(noProxy).toMatchObject({ direct: 4, inFlight: 4, proxyInFlight: null, proxyQueued: null });
    expect(noProxy.summary).toBe('4 in flight (0 through the proxy, 4 from direct tunnel clients), 2 waiting at the engine');
  });

  it('engine lower than the proxy (its reading predates requests the proxy just sent): no negative direct count', () => {
    const load = merged({ inFlight: 3, queued: 0 }, { requestsRunning: 1, requestsWaiting: 0 });
    expect(load).toMatchObject({ direct: 0, inFlight: 3 });
    expect(load.summary).toMatch(/^3 in flight \(3 through the proxy, 0 from direct tunnel clients\)/);
  });

  it('stale by age: shown as stale with its age and last figures, direct unknown — not 0', () => {
    const load = merged({ inFlight: 1, queued: 0 }, { requestsRunning: 0, requestsWaiting: 0, source: { kind: 'vllm', atMs: NOW - 14_000, detail: null } });
    expect(load).toMatchObject({ engine: 'stale', direct: null, inFlight: null, engineRunning: 0, engineReadAt: NOW - 14_000 });
    expect(load.summary).toBe("1 in flight through the proxy; direct tunnel clients unknown: the engine's figure was read 14 s ago; it last said 0 running, 0 waiting");
    // the age reads in minutes past one
    expect(merged(null, { source: { kind: 'vllm', atMs: NOW - 5 * 60_000, detail: null } }).engineNote).toBe("the engine's figure was read 5 min ago");
  });

  it('stale because the last reading failed, or because the host is away: said so, direct unknown', () => {
    const failed = merged({ inFlight: 0, queued: 0 }, { requestsRunning: 2, stale: true, staleReason: 'TELEMETRY_SCRAPE_FAILED: timeout' });
    expect(failed).toMatchObject({ engine: 'stale', direct: null, engineRunning: 2 });
    expect(failed.engineNote).toBe('the last reading failed (TELEMETRY_SCRAPE_FAILED: timeout); last good one read 1 s ago');
    const away = merged({ inFlight: 0, queued: 0 }, { requestsRunning: 2 }, { state: 'reconnecting' });
    expect(away).toMatchObject({ engine: 'stale', direct: null });
    expect(away.engineNote).toMatch(/^the host is reconnecting/);
  });

  it('never read: unknown, with why; a fake without a source is taken as read at the snapshot', () => {
    const never = merged({ inFlight: 1, queued: 0 }, { requestsRunning: null, requestsWaiting: null, source: { kind: 'vllm', atMs: null, detail: null } });
    expect(never).toMatchObject({ engine: 'unknown', direct: null, engineRunning: null, engineReadAt: null });
    expect(never.summary).toBe('1 in flight through the proxy; direct tunnel clients unknown: the engine has not reported its request counts yet');
    expect(mergeLoad(null, engineFigure({ at: NOW, hosts: [] }, TARGET, NOW, MAX_AGE_MS), NOW).engineNote).toBe('the fleet has no view of this service');
    const { source: _drop, ...noSource } = snap().hosts[0]!.services[0]!;
    const fake = engineFigure(fleetStateOf({ at: NOW, hosts: [{ ...snap().hosts[0]!, services: [{ ...noSource, requestsRunning: 1 }] }] }), TARGET, NOW, MAX_AGE_MS);
    expect(fake).toMatchObject({ state: 'fresh', running: 1, readAt: NOW });
  });

  it('engine gauges are whole requests (a Prometheus average rounds), never negative', () => {
    expect(merged({ inFlight: 0, queued: 0 }, { requestsRunning: 2.6, requestsWaiting: -1 })).toMatchObject({ engineRunning: 3, engineWaiting: 0, direct: 3 });
  });
});
