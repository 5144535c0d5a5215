import { existsSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import { dirname } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FleetSnapshotSchema, type FleetSnapshot } from '../../../../src-preload/contract/index.js';
import { AppError, FakeClock } from '../../../../src-main/core/base/index.js';
import { upstreamKey, type UpstreamClient } from '../../../../src-main/core/upstream/index.js';
import { ConfigSchema, type Config } from '../../../../src-main/core/config/index.js';
import { FleetService } from '../../../../src-main/core/fleet/index.js';
import { FakeSession, startFakeVllm, type FakeVllm } from './fakes.js';

const SMI = '0, GPU-aaaa, NVIDIA L20, 38751, 46068, 100, 254.31, 350.00, 71\n';
const SMI_3 = [0, 1, 2].map((i) => `${i}, GPU-${i}, NVIDIA L40S, 1235, 46068, 9, 110.23, 350.00, 54`).join('\n') + '\n';

function makeConfig(extra: Partial<Record<'gpu2Port', number>> = {}): Config {
  return ConfigSchema.parse({
    hosts: [
      {
        label: 'l20-poc',
        ssh: { host: 'gpu1.example', port: 22, user: 'ops', identityFile: '/keys/id' },
        gpu: { model: 'NVIDIA L20', count: 1 },
        pricePerHourUsd: 2.641736,
        services: [{ id: 'qwen', kind: 'vllm', remotePort: 8000, model: 'Qwen3.6-27B-FP8', aliases: ['qwen'], slots: 4 }],
      },
      {
        label: 'l40s-lab',
        ssh: { host: 'gpu2.example', port: extra.gpu2Port ?? 2222, user: 'ops', identityFile: '/keys/id' },
        services: [{ id: 'small', kind: 'vllm', remotePort: 8001, model: 'small-model' }],
      },
    ],
  });
}

let vllm: FakeVllm;
let clock: FakeClock;
let sessions: Map<string, FakeSession[]>;
let fleet: FleetService;

function build(config: Config = makeConfig()): FleetService {
  return new FleetService({
    config,
    clock,
    pollIntervalMs: 1_000,
    connectionFactory: (host) => {
      const s = new FakeSession(host.label, new Map([[8000, vllm.port], [8001, vllm.port]]), host.label === 'l20-poc' ? SMI : SMI_3);
      sessions.set(host.label, [...(sessions.get(host.label) ?? []), s]);
      return s;
    },
  });
}
const session = (label: string): FakeSession => sessions.get(label)!.at(-1)!;

/** Advances the fake clock one interval and waits for the round's tick (real I/O runs meanwhile). */
async function tick(f: FleetService = fleet): Promise<FleetSnapshot> {
  const next = new Promise<FleetSnapshot>((resolve) => {
    const sub = f.onDidTick((s) => {
      void sub.dispose();
      resolve(s);
    });
  });
  clock.advance(1_000);
  return next;
}

async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
}

beforeEach(async () => {
  vllm = await startFakeVllm();
  clock = new FakeClock(1_700_000_000_000);
  sessions = new Map();
  fleet = build();
});
afterEach(async () => {
  await fleet.dispose();
  await vllm.close();
});

describe('FleetService', () => {
  it('shows configured hosts before start, in the contract shape', () => {
    const snap = fleet.snapshot();
    expect(FleetSnapshotSchema.parse(snap)).toEqual(snap);
    const host = snap.hosts[0]!;
    expect(host).toMatchObject({
      label: 'l20-poc',
      address: 'ops@gpu1.example:22',
      state: 'disconnected',
      gpuModel: 'NVIDIA L20',
      pricePerHourUsd: 2.641736,
      gpus: [],
      updatedAt: null,
    });
    expect(host.services[0]).toMatchObject({ id: 'qwen', tunnel: { state: 'idle', localUrl: null }, health: 'unknown', stale: false });
    expect(snap.hosts[1]!.address).toBe('ops@gpu2.example:2222');
  });

  it('connects, opens tunnels on 127.0.0.1, polls GPUs and metrics, and computes rates', async () => {
    fleet.start();
    await settle();
    const first = await tick();
    expect(FleetSnapshotSchema.parse(first)).toEqual(first);
    const h = first.hosts[0]!;
    expect(h.state).toBe('connected');
    expect(h.gpus).toEqual([
      {
        index: 0,
        uuid: 'GPU-aaaa',
        name: 'NVIDIA L20',
        memoryUsedMiB: 38751,
        memoryTotalMiB: 46068,
        utilizationPct: 100,
        powerW: 254.31,
        powerLimitW: 350,
        temperatureC: 71,
        vendor: 'nvidia',
        // The fake's --query-compute-apps lists none on this GPU (issue #29 item 3: the list is kept now).
        processes: [],
      },
    ]);
    expect(h.gpuVendor).toBe('nvidia');
    expect(h.gpuSource).toMatchObject({ kind: 'nvidia-smi', atMs: expect.any(Number) });
    expect(first.hosts[1]!.gpus).toHaveLength(3);
    const svc = h.services[0]!;
    expect(svc.tunnel.state).toBe('up');
    expect(svc.tunnel.localUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(svc).toMatchObject({ health: 'ok', sleep: 'awake', requestsRunning: 2, requestsWaiting: 1, kvCachePct: 40, stale: false });
    expect(svc.generationTokensPerS).toBeNull(); // first sample
    expect(session('l20-poc').forwardCalls[0]).toEqual({ dstHost: '127.0.0.1', dstPort: 8000 });
    // The console's own callers get the tunnel's private end; the snapshot shows the public port.
    expect(fleet.upstream(upstreamKey('l20-poc', 'qwen')).endpoint).toMatchObject({ kind: 'tunnel', key: 'l20-poc/qwen', socketPath: expect.stringMatching(/\.sock$/) });

    vllm.generationTokens += 150; // over the 1 s interval of the fake clock
    vllm.promptTokens += 2_000;
    const second = await tick();
    const s2 = second.hosts[0]!.services[0]!;
    expect(s2.generationTokensPerS).toBe(150);
    expect(s2.promptTokensPerS).toBe(2_000);
    expect(second.hosts[0]!.updatedAt).toBe(clock.now());
  });

  it('a failed scrape keeps the last figures and marks them stale; the tunnel stays up while its probe passes', async () => {
    fleet.start();
    await settle();
    await tick();
    vllm.metricsStatus = 500;
    vllm.running = 99;
    const snap = await tick();
    const svc = snap.hosts[0]!.services[0]!;
    expect(svc.stale).toBe(true);
    expect(svc.staleReason).toMatch(/^TELEMETRY_HTTP_STATUS: .*HTTP 500/);
    expect(svc.requestsRunning).toBe(2);
    expect(svc.tunnel.state).toBe('up');
    expect(svc.tunnel.lastProbe).toMatchObject({ ok: true, error: null });
    vllm.metricsStatus = 200;
    const back = (await tick()).hosts[0]!.services[0]!;
    expect(back).toMatchObject({ stale: false, staleReason: null, requestsRunning: 99, tunnel: { state: 'up' } });
  });

  it('a failing end-to-end probe (GET /v1/models) turns the tunnel degraded with the coded reason, and up again when it passes', async () => {
    fleet.start();
    await settle();
    expect((await tick()).hosts[0]!.services[0]!.tunnel.state).toBe('up');
    vllm.modelsStatus = 503;
    // /metrics still answers, which proves the path; the probe of /v1/models (what the proxy needs) comes
    // every 10th poll while readings succeed — within 10 s the tunnel is degraded.
    let svc = (await tick()).hosts[0]!.services[0]!;
    for (let i = 0; i < 10 && svc.tunnel.state === 'up'; i++) svc = (await tick()).hosts[0]!.services[0]!;
    expect(svc.tunnel.state).toBe('degraded');
    expect(svc.tunnel.lastError).toMatchObject({ code: 'FLEET_PROBE_HTTP_STATUS' });
    expect(svc.tunnel.lastError!.message).toContain('HTTP 503: model not loaded');
    expect(svc.tunnel.lastProbe).toMatchObject({ ok: false });
    vllm.modelsStatus = 200;
    // a failed probe is retried every poll
    expect((await tick()).hosts[0]!.services[0]!.tunnel).toMatchObject({ state: 'up', lastError: null });
  });

  it('a failed reading through the tunnel runs the probe in the same poll', async () => {
    fleet.start();
    await settle();
    expect((await tick()).hosts[0]!.services[0]!.tunnel.state).toBe('up');
    vllm.modelsStatus = 503;
    vllm.metricsStatus = 500;
    const svc = (await tick()).hosts[0]!.services[0]!;
    expect(svc.stale).toBe(true);
    expect(svc.tunnel.state).toBe('degraded');
  });

  it('Test: GET /v1/models then a 1-token chat, with per-step latency; a host that is not connected fails clearly', async () => {
    fleet.start();
    await settle();
    await tick();
    const result = await fleet.testTunnel('l20-poc', 'qwen');
    expect(result).toMatchObject({ ok: true, error: null, steps: [{ name: 'models', ok: true, status: 200 }, { name: 'chat', ok: true, status: 200 }] });
    expect(result.totalMs).toBeGreaterThanOrEqual(0);
    expect(vllm.chatCalls).toBe(1);
    expect((await tick()).hosts[0]!.services[0]!.tunnel.lastTest).toMatchObject({ ok: true });
    session('l20-poc').set({ state: 'reconnecting', error: new AppError('SSH_DISCONNECTED', 'lost', { retryable: true }), nextRetryAt: clock.now() + 1_000 });
    const down = await fleet.testTunnel('l20-poc', 'qwen');
    expect(down).toMatchObject({ ok: false, steps: [], error: { code: 'FLEET_TUNNEL_NOT_READY' } });
    await expect(fleet.testTunnel('l20-poc', 'nope')).rejects.toMatchObject({ code: 'FLEET_UNKNOWN_SERVICE' });
  });

  it('health other than 200 reads as down', async () => {
    fleet.start();
    await settle();
    vllm.healthStatus = 503;
    expect((await tick()).hosts[0]!.services[0]!.health).toBe('down');
  });

  it('SSH reconnecting → tunnel reconnecting, services and GPUs stale, nextRetryAt shown; no polls meanwhile', async () => {
    fleet.start();
    await settle();
    await tick();
    const s = session('l20-poc');
    const changes: string[] = [];
    fleet.onDidChangeHostState((c) => changes.push(`${c.label}:${c.state}:${c.message}`));
    const retryAt = clock.now() + 2_000;
    s.set({ state: 'reconnecting', error: new AppError('SSH_DISCONNECTED', 'the SSH connection was lost', { retryable: true }), nextRetryAt: retryAt });
    expect(changes).toEqual(['l20-poc:reconnecting:the SSH connection was lost']);
    const calls = s.execCalls;
    const snap = await tick();
    const h = snap.hosts[0]!;
    expect(h).toMatchObject({ state: 'reconnecting', nextRetryAt: retryAt, gpuStale: true, lastError: { code: 'SSH_DISCONNECTED' } });
    expect(h.gpus).toHaveLength(1); // last good figures kept
    expect(h.services[0]).toMatchObject({
      stale: true,
      health: 'unknown',
      tunnel: { state: 'reconnecting', nextRetryAt: retryAt, lastError: { code: 'SSH_DISCONNECTED' } },
      requestsRunning: 2,
    });
    expect(h.services[0]!.staleReason).toMatch(/^SSH_DISCONNECTED/);
    expect(s.execCalls).toBe(calls);
    s.set({ state: 'connected' });
    await settle();
    const again = (await tick()).hosts[0]!;
    expect(again).toMatchObject({ state: 'connected', gpuStale: false, lastError: null, nextRetryAt: null });
    expect(again.services[0]).toMatchObject({ stale: false, tunnel: { state: 'up' } });
  });

  it('nvidia-smi failing keeps the last GPU figures and says why', async () => {
    fleet.start();
    await settle();
    await tick();
    session('l20-poc').exec = async () => ({ exitCode: 127, signal: null, stdout: '', stderr: 'sh: nvidia-smi: not found\n', truncated: false });
    const h = (await tick()).hosts[0]!;
    expect(h.gpuStale).toBe(true);
    expect(h.gpuStaleReason).toBe('TELEMETRY_EXEC_FAILED: nvidia-smi exited 127: sh: nvidia-smi: not found');
    expect(h.gpus[0]!.memoryUsedMiB).toBe(38751);
  });

  it('never overlaps polls: a host still busy is skipped, the tick still fires', async () => {
    fleet.start();
    await settle();
    let release!: () => void;
    let calls = 0;
    const s = session('l20-poc');
    const answer = s.exec;
    s.exec = (command, options) => {
      calls++;
      if (calls > 1) return answer(command, options);
      return new Promise((resolve) => {
        release = () => resolve(answer(command, options));
      });
    };
    const t1 = tick();
    await settle();
    clock.advance(1_000); // round deadline: the tick fires although l20-poc is still polling
    await t1;
    await tick();
    await tick();
    expect(calls).toBe(1);
    release();
    await settle();
    await tick();
    // the released detection found nvidia-smi; the next round read the GPUs
    expect(calls).toBeGreaterThan(1);
    expect(fleet.snapshot().hosts[0]!.gpus).toHaveLength(1);
  });

  it('connect/disconnect by label; unknown labels are FLEET_UNKNOWN_HOST; disconnect closes tunnels', async () => {
    await expect(fleet.connect('nope')).rejects.toMatchObject({ code: 'FLEET_UNKNOWN_HOST' });
    await expect(fleet.disconnect('nope')).rejects.toMatchObject({ code: 'FLEET_UNKNOWN_HOST' });
    expect(() => fleet.upstream(upstreamKey('l20-poc', 'qwen'))).toThrow(expect.objectContaining({ code: 'FLEET_TUNNEL_NOT_READY' }));
    expect(() => fleet.upstream(upstreamKey('l20-poc', 'nope'))).toThrow(expect.objectContaining({ code: 'FLEET_UNKNOWN_SERVICE' }));
    expect(await fleet.connect('l20-poc')).toBe('connected');
    await settle();
    const url = fleet.snapshot().hosts[0]!.services[0]!.tunnel.localUrl!;
    const privateEnd = fleet.upstream(upstreamKey('l20-poc', 'qwen'));
    expect(privateEnd.closed).toBe(false);
    expect(await fleet.disconnect('l20-poc')).toBe('disconnected');
    const svc = fleet.snapshot().hosts[0]!.services[0]!;
    expect(svc.tunnel).toMatchObject({ state: 'closed', localUrl: null });
    await expect(refused(url)).resolves.toBe(true);
    // The tunnel's client went with it: nothing can be sent through the closed tunnel's socket.
    expect(privateEnd.closed).toBe(true);
    await expect(privateEnd.request({ path: '/v1/models', deadlineMs: 1_000, maxBodyBytes: 1_024 })).rejects.toMatchObject({ code: 'UPSTREAM_CLOSED' });
    expect(() => fleet.upstream(upstreamKey('l20-poc', 'qwen'))).toThrow(expect.objectContaining({ code: 'FLEET_TUNNEL_NOT_READY' }));
  });

  it('applyConfig keeps unchanged hosts, restarts changed ones, stops removed ones, starts added ones', async () => {
    fleet.start();
    await settle();
    const keep = session('l20-poc');
    const changedOld = session('l40s-lab');
    fleet.applyConfig(makeConfig({ gpu2Port: 2200 }));
    await settle();
    expect(session('l20-poc')).toBe(keep);
    expect(changedOld.disposed).toBe(true);
    expect(session('l40s-lab')).not.toBe(changedOld);
    expect(session('l40s-lab').state).toBe('connected');
    const onlyOne = makeConfig();
    onlyOne.hosts = onlyOne.hosts.slice(0, 1);
    fleet.applyConfig(onlyOne);
    await settle();
    expect(fleet.snapshot().hosts.map((h) => h.label)).toEqual(['l20-poc']);
    expect(session('l40s-lab').disposed).toBe(true);
  });

  it('dispose closes pollers, tunnels and sessions; nothing is left listening or scheduled', async () => {
    fleet.start();
    await settle();
    await tick();
    const urls = fleet.snapshot().hosts.map((h) => h.services[0]!.tunnel.localUrl!);
    expect(urls).toHaveLength(2);
    const sockets = [upstreamKey('l20-poc', 'qwen'), upstreamKey('l40s-lab', 'small')].map((k) => socketOf(fleet.upstream(k)));
    for (const path of sockets) expect(existsSync(path)).toBe(true);
    expect(fleet.resourceCounts()).toMatchObject({ hosts: 2, connections: 2, listeningForwards: 2 });
    await fleet.dispose();
    await fleet.dispose();
    expect(fleet.resourceCounts()).toEqual({ hosts: 0, connections: 0, listeningForwards: 0, activeStreams: 0 });
    expect(clock.pending).toBe(0);
    expect(session('l20-poc').disposed).toBe(true);
    for (const url of urls) await expect(refused(url)).resolves.toBe(true);
    // The private sockets and their (temporary) folder are gone too.
    for (const path of sockets) expect(existsSync(path)).toBe(false);
    expect(existsSync(dirname(sockets[0]!))).toBe(false);
  });
});

function refused(url: string): Promise<boolean> {
  const port = Number(new URL(url).port);
  return new Promise((resolve) => {
    const s = netConnect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', () => resolve(true));
  });
}

function socketOf(client: UpstreamClient): string {
  if (client.endpoint.kind !== 'tunnel') throw new Error(`${client.target} is not a tunnel's client`);
  return client.endpoint.socketPath;
}
