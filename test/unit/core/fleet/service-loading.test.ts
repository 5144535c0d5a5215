import { describe, expect, it } from 'vitest';
import { ConfigSchema } from '../../../../src-main/core/config/index.js';
import { ServiceMonitor } from '../../../../src-main/core/fleet/service-monitor.js';
import type { ServiceSource } from '../../../../src-main/core/fleet/sources.js';
import { emptyServiceReading, renderFleetExposition, TelemetryErrorCode, type SourceReading } from '../../../../src-main/core/telemetry/index.js';
import { ServiceViewSchema, type HostView, type ServiceView } from '../../../../src-preload/contract/index.js';
import { serviceViewOf } from '../../../../src-main/core/fleet/index.js';

// Issue #27 finding 7: during a llama-server restart the service showed
// "awake" with its last generation rate (marked stale) and health "down".
// A server answering /health 503 "Loading model" is `loading`: its own state,
// read now (not stale), with /health as the source; nothing it served before
// (rate, running requests, sleep state) is shown as current; once it serves,
// the window starts afresh.

const config = ConfigSchema.parse({
  hosts: [{ label: 'strix', ssh: { host: 'x', user: 'ops', agent: true }, services: [{ id: 'coder', kind: 'llama-server', remotePort: 8080, model: 'qwen3-coder' }] }],
}).hosts[0]!.services[0]!;

const T0 = 1_700_000_000_000;

function serving(atMs: number, generated: number): SourceReading {
  const service = { ...emptyServiceReading('llama-server'), health: 'ok' as const, sleepState: 'awake' as const, running: 1, waiting: 0, generationTokensTotal: generated, promptTokensTotal: 100, version: 'b6543', countersIncludeLive: true };
  return { ok: true, atMs, service, unreadable: 0 };
}

const loading = (atMs: number): SourceReading => ({
  ok: false,
  atMs,
  stale: { code: TelemetryErrorCode.SERVER_LOADING, message: 'llama-server is loading the model (HTTP 503)', atMs },
});

/** A monitor over readings handed in one by one (a source that does not go through a tunnel needs no forward). */
function monitorOver(readings: SourceReading[]) {
  const source: ServiceSource = { kind: 'llama-server', id: 'strix/coder', scrape: () => Promise.resolve(readings.shift()!) };
  const monitor = new ServiceMonitor(config, () => source, false);
  return { monitor, next: () => monitor.scrape(() => T0), view: (): ServiceView => ServiceViewSchema.parse(serviceViewOf(monitor.state('strix', 'connected', null), { state: 'connected', lastError: null })) };
}

describe('a llama-server loading its model', () => {
  it('is `loading` from /health, with no figure from before shown as current; serving again starts a fresh window', async () => {
    const { monitor, next, view } = monitorOver([serving(T0, 1_000), serving(T0 + 1_000, 1_050), loading(T0 + 2_000), loading(T0 + 3_000), serving(T0 + 20_000, 0), serving(T0 + 21_000, 40)]);
    await next();
    await next();
    expect(view()).toMatchObject({ health: 'ok', sleep: 'awake', generationTokensPerS: 50, stale: false });

    await next();
    await next();
    const v = view();
    expect(v).toMatchObject({
      health: 'loading',
      loadingSince: T0 + 2_000,
      sleep: 'unknown',
      stale: false,
      staleReason: null,
      generationTokensPerS: null,
      promptTokensPerS: null,
      requestsRunning: null,
      requestsWaiting: null,
      version: null,
      source: { kind: 'llama-server', atMs: T0 + 3_000, detail: 'GET /health: HTTP 503 "Loading model"' },
    });
    // what telemetry records: no figures, not the last ones
    expect(monitor.figures).toBeNull();

    await next();
    expect(view()).toMatchObject({ health: 'ok', sleep: 'awake', generationTokensPerS: null, stale: false });
    expect(view().loadingSince).toBeUndefined();
    await next();
    // the rate of the new process only (0 → 40 tokens in 1 s), nothing carried over from the old one
    expect(view().generationTokensPerS).toBe(40);
  });

  it('reads as not up in the fleet exposition (0), as down did; unknown stays absent', async () => {
    const { next, view } = monitorOver([loading(T0)]);
    await next();
    const host = { label: 'strix', services: [view()], gpus: [], state: 'connected' } as unknown as HostView;
    expect(renderFleetExposition({ at: T0, hosts: [host] })).toMatch(/gpu_console_service_up\{host="strix",service="coder",kind="llama-server",model="qwen3-coder"\} 0/);
  });
});
