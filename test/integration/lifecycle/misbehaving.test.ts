import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger, systemClock } from '../../../src-main/core/base/index.js';
import { LifecycleService, type LifecycleTargetConfig } from '../../../src-main/core/lifecycle/index.js';
import { openStore, type Store } from '../../../src-main/core/store/index.js';
import type { ActionView, FleetSnapshot } from '../../../src-preload/contract/index.js';
import { urlClient } from '../../helpers/upstream.js';
import { fleetStateOf } from '../../helpers/fleet-state.js';

// A vLLM stand-in on loopback that lies or stalls, and a fake fleet whose
// nvidia-smi figure we control: each outcome must be reported as it was.

interface StubState {
  sleeping: boolean;
  hangWake: boolean;
  vramMiB: number;
  execExit: number;
  calls: string[];
  drains: number;
  resumes: number;
}
const st: StubState = { sleeping: false, hangWake: false, vramMiB: 40_000, execExit: 0, calls: [], drains: 0, resumes: 0 };
let server: Server;
let url: string;
let store: Store;
let service: LifecycleService;
let gpuAt = Date.now();

const target: LifecycleTargetConfig = {
  label: 'stub', serviceId: 'm', upstream: 'stub/m', kind: 'vllm', model: 'M', remoteHost: '127.0.0.1', remotePort: 8000,
  driver: 'vllm-sleep', routerBaseUrl: null, restartCommand: 'systemctl restart {service}', sleepLevel: 1,
};

function snapshot(): FleetSnapshot {
  return {
    at: Date.now(),
    hosts: [{
      label: 'stub', address: 'x@127.0.0.1:22', state: 'connected', lastError: null, nextRetryAt: null, hostKeyFingerprint: null,
      gpuModel: 'G', pricePerHourUsd: null, gpuStale: false, gpuStaleReason: null, updatedAt: gpuAt,
      gpus: [{ index: 0, uuid: null, name: 'G', memoryUsedMiB: st.vramMiB, memoryTotalMiB: 48_000, utilizationPct: 0, powerW: null, powerLimitW: null, temperatureC: null }],
      services: [{
        id: 'm', kind: 'vllm', model: 'M', aliases: [], slots: 4, remotePort: 8000,
        tunnel: { state: 'up', localUrl: url, lastError: null }, health: 'ok', sleep: st.sleeping ? 'asleep-1' : 'awake',
        requestsRunning: 0, requestsWaiting: 0, kvCachePct: 0, generationTokensPerS: 0, promptTokensPerS: 0, stale: false, staleReason: null,
      }],
    }],
  };
}

beforeAll(async () => {
  server = createServer((req, res) => {
    st.calls.push(`${req.method} ${req.url}`);
    req.resume();
    req.on('end', () => {
      if (req.url === '/is_sleeping') return void res.end(JSON.stringify({ is_sleeping: st.sleeping }));
      if (req.url === '/health') return void res.end('');
      if (req.url?.startsWith('/sleep')) {
        st.sleeping = true; // answers 200 like vLLM … but the VRAM figure stays where it was
        return void res.end('');
      }
      if (req.url?.startsWith('/wake_up')) {
        if (st.hangWake) return; // never answers
        st.sleeping = false;
        return void res.end('');
      }
      res.statusCode = 404;
      res.end('');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  store = openStore({ file: join(mkdtempSync(join(tmpdir(), 'gc-lc-stub-')), 'db.sqlite'), logger: silentLogger });
  // GPU figures "poll" continuously: each read is newer than the action's calls.
  const timer = setInterval(() => (gpuAt = Date.now()), 20);
  timer.unref();
  service = new LifecycleService({
    store,
    clock: systemClock,
    logger: silentLogger,
    targets: () => [target],
    fleet: {
      state: () => fleetStateOf(snapshot()),
      upstream: () => urlClient(url),
      exec: (_label, command) => {
        st.calls.push(`exec ${command}`);
        return Promise.resolve({ exitCode: st.execExit, signal: null, stdout: '', stderr: st.execExit ? 'Job for vllm.service failed because the control process exited with error code.' : '', truncated: false });
      },
    },
    proxy: {
      drain: () => {
        st.drains++;
        return Promise.resolve({ drained: 2, aborted: 1 });
      },
      resume: () => void st.resumes++,
      load: () => ({ inFlight: 2, queued: 3 }),
    },
    onAction: () => undefined,
    onStanding: () => undefined,
    notify: () => undefined,
    options: { verifyDeadlineMs: () => 700, pollMs: 40 },
  });
});

afterEach(() => {
  Object.assign(st, { sleeping: false, hangWake: false, vramMiB: 40_000, execExit: 0, calls: [], drains: 0, resumes: 0 });
});

afterAll(async () => {
  await service?.dispose();
  store?.close();
  await new Promise((r) => server?.close(r));
});

async function run(kind: ActionView['kind']): Promise<ActionView> {
  const { action } = service.propose({ upstream: 'stub/m', kind, proposer: 'test' });
  service.approve({ id: action.id, nonce: action.nonce!, typedLabel: 'stub', caller: 'test' });
  return service.settled(action.id);
}

describe('a server that misbehaves is reported truly', () => {
  it('sleep answers 200 and is_sleeping says true, but VRAM does not fall → failed, with what was seen; admission resumed', async () => {
    const a = await run('sleep');
    expect(a.state).toBe('failed');
    expect(a.observed.join('\n')).toMatch(/sleep state: asleep/);
    expect(a.observed.join('\n')).toMatch(/✗ VRAM: 40000 → 40000 MiB \(\+0 MiB; expected to fall/);
    expect(a.error).toMatch(/not verified within/);
    expect(a).toMatchObject({ drained: 2, aborted: 1, inFlight: 2, queued: 3 });
    expect(st.drains).toBe(1);
    expect(st.resumes).toBe(1);
  });

  it('a wake that hangs fails at its deadline, naming the call', async () => {
    st.sleeping = true;
    st.hangWake = true;
    st.vramMiB = 1_000;
    const t0 = Date.now();
    const a = await run('wake');
    expect(a.state).toBe('failed');
    expect(a.error).toMatch(/LIFECYCLE_STEP_FAILED: step 1 \(POST http:\/\/127\.0\.0\.1:8000\/wake_up .*did not answer within/);
    expect(Date.now() - t0).toBeLessThan(5_000);
    expect(st.drains).toBe(0); // a wake does not drain
  });

  it('a restart command that exits non-zero fails with its exit code and stderr; the command ran once, verbatim', async () => {
    st.execExit = 1;
    const a = await run('restart');
    expect(a.state).toBe('failed');
    expect(a.error).toMatch(/exited 1: Job for vllm.service failed/);
    expect(st.calls.filter((c) => c.startsWith('exec'))).toEqual(['exec systemctl restart m']);
    const step = store.audit.list({ limit: 50 }).find((e) => e.payload.actionId === a.id && e.type === 'lifecycle.step')!;
    expect(step.payload).toMatchObject({ exitCode: 1, step: 'systemctl restart m' });
    expect(st.resumes).toBe(1);
  });

  it('a sleep that does what it says is verified', async () => {
    const p = service.propose({ upstream: 'stub/m', kind: 'sleep', proposer: 'test' }).action;
    setTimeout(() => (st.vramMiB = 1_200), 100);
    service.approve({ id: p.id, nonce: p.nonce!, caller: 'test' });
    const a = await service.settled(p.id);
    expect(a.state, a.observed.join('; ')).toBe('verified');
  });
});
