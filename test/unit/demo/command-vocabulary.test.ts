import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../../src-main/core/base/index.js';
import { ConfigSchema, type Config } from '../../../src-main/core/config/index.js';
import { SS_COMMAND, driverFor, lifecycleTargets, parseSsListeners } from '../../../src-main/core/lifecycle/index.js';
import { runLiveChecks } from '../../../src-main/core/report/index.js';
import { LiveCheckId } from '../../../src-main/core/report/live-checks.js';
import { LogsService, logCommand, logSourceOf, type LogSource } from '../../../src-main/core/logs/index.js';
import { parseStdout, parseStderr, isNotice } from '../../../src-main/core/logs/source-output.js';
import { killOnCloseCommand, type ExecResult, type ExecStreamOptions } from '../../../src-main/core/ssh/index.js';
import { ExecChunkQueue } from '../../../src-main/core/ssh/exec-stream.js';
import type { LogEntry } from '../../../src-preload/contract/index.js';
import { until } from '../../helpers/until.js';
import {
  AMD_SYSFS_COMMAND,
  AmdGpuSource,
  GPU_DETECT_COMMAND,
  NvidiaSmiSource,
  WANTED_GPU_FIELDS,
  parseAmdSysfs,
  parseGpuDetect,
  type ExecRunner,
} from '../../../src-main/core/telemetry/index.js';
import { startDemoFleet, type DemoFleet } from '../../../src-main/demo/index.js';
import { DEFAULT_MODEL_CACHE, healthCommand } from '../../../src-main/core/fleet/host-health-command.js';
import { parseHealthOutput } from '../../../src-main/core/fleet/host-health-parse.js';
import { amdGpuProcesses, matchGpuProcesses } from '../../../src-main/core/fleet/gpu-process-match.js';
import { GpuFaultsTracker } from '../../../src-main/core/fleet/gpu-faults.js';

// The golden test of the console's SSH vocabulary against the demo fleet's
// (issue #28 item 3). The simulator owns its command strings (the shell loops
// it recognises, its nvidia-smi fields, its restart commands); every command
// the console sends to a host is taken here from core itself, or sent by
// core's own code (the GPU sources, the report's live checks, the lifecycle
// drivers' plans), and run on the demo hosts' command interpreter — the one
// their SSH exec runs. Each must get an answer of the shape the console reads.
// A console command changed on one side only (a new field, another loop, other
// quoting) fails here loudly, instead of the demo answering "command not
// found" and the fleet view going quiet.

let dir: string;
let fleet: DemoFleet;
let config: Config;
/** Every command the console's code sent, by host, with the exit code the demo answered. */
const sent: { host: string; command: string; code: number | null }[] = [];

/** The demo host's interpreter as the console's exec: an ExecRunner for the sources, an SSH exec for the live checks. */
function execOn(host: string): ExecRunner & ((command: string, options: unknown) => Promise<ExecResult>) {
  return async (command: string) => {
    const r = await fleet.host(host).run(command);
    sent.push({ host, command, code: r.code });
    return { exitCode: r.code, signal: null, stdout: r.stdout, stderr: r.stderr, truncated: false };
  };
}

const NVIDIA = ['l20-poc', 'tri-gpu'];
const AMD = ['strix'];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gc-vocabulary-'));
  fleet = await startDemoFleet({ dir, timeScale: 1000 });
  config = ConfigSchema.parse(fleet.config);
}, 30_000);

afterAll(async () => {
  await fleet?.dispose();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("the console's commands on the demo hosts", () => {
  it('GPU detection (GPU_DETECT_COMMAND) finds nvidia-smi on the NVIDIA hosts and the amdgpu sysfs files on the AMD host', async () => {
    for (const host of [...NVIDIA, ...AMD]) {
      const r = await execOn(host)(GPU_DETECT_COMMAND, {});
      expect(r.exitCode, `${host}: ${r.stderr}`).toBe(0);
      expect(parseGpuDetect(r.stdout).tool, host).toBe(NVIDIA.includes(host) ? 'nvidia-smi' : 'amd-sysfs');
    }
  });

  it("nvidia-smi as the fleet's source runs it (field probe, query, compute apps): every wanted field known, every GPU read", async () => {
    for (const host of NVIDIA) {
      const source = new NvidiaSmiSource({ id: `${host}/gpu`, exec: execOn(host), clock: systemClock, appsEvery: 1 });
      const reading = await source.scrape();
      expect(reading.ok, JSON.stringify(reading)).toBe(true);
      if (!reading.ok) continue;
      const profile = config.hosts.find((h) => h.label === host)!;
      expect(reading.gpus).toHaveLength(profile.gpu!.count);
      expect(reading.unreadable).toBe(0);
      // The probe kept every field the console asks for: the demo's --help-query-gpu lists them all.
      expect(source.queryFields).toEqual(WANTED_GPU_FIELDS);
      const again = await source.scrape();
      expect(again.ok).toBe(true);
    }
  });

  it('the amdgpu sysfs read (AMD_SYSFS_COMMAND), as the fleet\'s source and as a plain command, reads every card', async () => {
    for (const host of AMD) {
      const direct = await execOn(host)(AMD_SYSFS_COMMAND, {});
      expect(direct.exitCode).toBe(0);
      const parsed = parseAmdSysfs(direct.stdout);
      expect(parsed?.errors).toBe(0);
      expect(parsed?.gpus).toHaveLength(config.hosts.find((h) => h.label === host)!.gpu!.count);
      expect(parsed?.gpus[0]).toMatchObject({ memoryUsedMiB: expect.any(Number), powerW: expect.any(Number), temperatureC: expect.any(Number) });
      const reading = await new AmdGpuSource({ id: `${host}/gpu`, exec: execOn(host), clock: systemClock, tool: 'amd-sysfs' }).scrape();
      expect(reading.ok, JSON.stringify(reading)).toBe(true);
    }
  });

  it("the report's live checks (nvidia-smi or sysfs, ss, sshd -T) pass on every host from the commands' answers alone", async () => {
    for (const host of config.hosts) {
      const noTunnel = () => {
        throw new Error('no tunnel in this test');
      };
      // A variable, not a literal: the checks' HTTP side (tunnel client or URL) is not what this test pins.
      const deps = { exec: execOn(host.label), upstream: noTunnel, serviceUrl: noTunnel, apiKey: async () => null, hostKeyFingerprint: 'SHA256:test', connection: 'connected', clock: systemClock };
      const { security } = await runLiveChecks(host, deps);
      const verdict = (id: string) => security.checks.find((c) => c.id === id);
      expect(verdict(LiveCheckId.GPU_VISIBLE), host.label).toMatchObject({ verdict: 'pass' });
      expect(verdict(LiveCheckId.PASSWORD_AUTH), host.label).toMatchObject({ verdict: 'pass' });
      expect(verdict(LiveCheckId.ROOT_LOGIN), host.label).toMatchObject({ verdict: 'pass' });
      for (const s of host.services) expect(verdict(LiveCheckId.portLoopback(s.id)), `${host.label}/${s.id}`).toMatchObject({ verdict: 'pass' });
    }
  });

  it("the lifecycle's ghost check (SS_COMMAND) sees each service's port held by a process", async () => {
    for (const host of config.hosts) {
      const r = await execOn(host.label)(SS_COMMAND, {});
      expect(r.exitCode).toBe(0);
      for (const s of host.services) {
        const listing = parseSsListeners(r.stdout, s.remotePort);
        expect(listing.listening, `${host.label}/${s.id}`).toBe(true);
        expect(listing.holders.length, `${host.label}/${s.id}`).toBeGreaterThan(0);
      }
    }
  });

  it("every restart the lifecycle plans for the demo's config runs on its host and restarts that service", async () => {
    const targets = lifecycleTargets(config).filter((t) => driverFor(t).supports('restart'));
    expect(targets.map((t) => t.upstream).sort()).toEqual(config.hosts.flatMap((h) => h.services.map((s) => `${h.label}/${s.id}`)).sort());
    for (const t of targets) {
      const host = fleet.host(t.label);
      const pidsOf = () => (t.kind !== 'llama-server' ? host.simulator(t.serviceId).state().pids : [host.llamaServer(t.serviceId).state().pid]);
      const before = pidsOf();
      const steps = driverFor(t).plan('restart', { sleepLevel: 0 }).filter((s) => s.kind === 'ssh');
      expect(steps.length, t.upstream).toBeGreaterThan(0);
      for (const step of steps) {
        const r = await execOn(t.label)(step.command, {});
        expect(r.exitCode, `${t.upstream}: ${step.command} → ${r.stderr}`).toBe(0);
      }
      expect(pidsOf(), t.upstream).not.toEqual(before);
    }
  }, 30_000);

  it('and nothing the console sent was answered "command not found" or a shell syntax error', () => {
    expect(sent.length).toBeGreaterThan(10);
    // nvidia-smi on the AMD host is the live checks' own probe for "no NVIDIA here" (then sysfs); plain `sshd -T` fails for a non-root user, as on a real host.
    const expectedFailures = (s: (typeof sent)[number]) => (AMD.includes(s.host) && s.command.startsWith('nvidia-smi ') && s.code === 127) || (s.command === 'sshd -T' && s.code === 1);
    expect(sent.filter((s) => s.code !== 0 && !expectedFailures(s))).toEqual([]);
  });
});

// The console's log commands (issue #29 items 1 and 8): every command core's
// builders make for a source the demo has (its journal units, its compose
// service and container, the files its services append to), plain and under
// the kill-on-close wrapper, is answered by the demo in the shape core's
// readers parse; and through core's own LogsService, a tail shows the
// start-up with the source's timestamps and a follow streams, stops, and
// sees a restart end in CUDA OOM.
describe("the console's log commands on the demo hosts", () => {
  /** A host's session as LogsService streams on it: the wrapped command on the demo's SSH exec stream. */
  function execStream(label: string, command: string, options: ExecStreamOptions = {}) {
    const queue = new ExecChunkQueue(options);
    const drains: (() => void)[] = [];
    const running = fleet.host(label).stream(killOnCloseCommand(command), {
      write: (fd, text) => {
        queue.push(fd, Buffer.from(text, 'utf8'));
        return !queue.paused;
      },
      onDrain: (fn) => drains.push(fn),
      end: (code) => queue.end({ exitCode: code, signal: null }),
    });
    sent.push({ host: label, command, code: running ? 0 : 127 });
    if (!running) queue.end({ exitCode: 127, signal: null });
    else queue.attach({ pause: () => undefined, resume: () => drains.forEach((d) => d()), close: () => running.stop() });
    return queue;
  }
  const logs = () => new LogsService({ hosts: { hostConfig: (label) => config.hosts.find((h) => h.label === label)!, execStream } });

  /** Every source kind the demo offers, on the host that has it. */
  function demoSources(): { host: string; serviceId: string; source: LogSource }[] {
    const out: { host: string; serviceId: string; source: LogSource }[] = [];
    for (const h of fleet.hosts) {
      for (const s of config.hosts.find((c) => c.label === h.label)!.services) {
        const { places } = h.serviceLog(s.id);
        out.push({ host: h.label, serviceId: s.id, source: logSourceOf(s)! });
        out.push({ host: h.label, serviceId: s.id, source: { kind: 'file', path: places.file } });
        if (places.container) out.push({ host: h.label, serviceId: s.id, source: { kind: 'docker', container: places.container, sudo: false } });
      }
    }
    return out;
  }

  it("every demo service names a log source (journal or compose) the console derives", () => {
    for (const h of config.hosts) for (const s of h.services) expect(logSourceOf(s)?.kind, `${h.label}/${s.id}`).toMatch(/^(journal|compose)$/);
    expect(new Set(demoSources().map((d) => d.source.kind))).toEqual(new Set(['journal', 'compose', 'docker', 'file']));
  });

  it("each builder's command (last N, since, resume) is answered with lines core parses, timestamps where the source has them", async () => {
    const vars = { service: 'x', host: 'x', model: 'x', port: 1 };
    for (const { host, source } of demoSources()) {
      const stamped = source.kind !== 'file';
      const queries = [{ lines: 30, follow: false }, ...(stamped ? [{ lines: 0, sinceMs: Date.now() - 3_600_000, follow: false }] : [])];
      for (const q of queries) {
        const command = logCommand(source, q, vars);
        const r = await fleet.host(host).run(command);
        sent.push({ host, command, code: r.code });
        expect(r.code, `${host}: ${command} → ${r.stderr}`).toBe(0);
        const records = [
          ...r.stdout.split('\n').filter(Boolean).flatMap((l) => parseStdout(source.kind, { bytes: Buffer.from(l), cutBytes: 0 }, 16384)),
          ...r.stderr.split('\n').filter(Boolean).map((l) => parseStderr(source.kind, { bytes: Buffer.from(l), cutBytes: 0 })),
        ];
        expect(records.length, command).toBeGreaterThan(q.lines === 30 ? 20 : 5);
        for (const rec of records) {
          expect(isNotice(rec), command).toBe(false);
          if (!isNotice(rec)) expect(rec.ts === null, `${command}: ${rec.text}`).toBe(!stamped);
        }
      }
    }
    // A resume: journalctl after the last entry's cursor prints nothing new; docker since the last line's stamp prints it again at most.
    const journal = demoSources().find((d) => d.source.kind === 'journal')!;
    const last = await fleet.host(journal.host).run(logCommand(journal.source, { lines: 1, follow: false }, vars));
    const cursor = (JSON.parse(last.stdout) as { __CURSOR: string }).__CURSOR;
    const after = await fleet.host(journal.host).run(logCommand(journal.source, { lines: 0, follow: false, resume: { cursor } }, vars));
    expect(after).toMatchObject({ code: 0, stdout: '' });
    const compose = demoSources().find((d) => d.source.kind === 'compose')!;
    const tail = await fleet.host(compose.host).run(logCommand(compose.source, { lines: 1, follow: false }, vars));
    const stamp = /^(\S+) /.exec(tail.stdout + tail.stderr)![1]!;
    const since = await fleet.host(compose.host).run(logCommand(compose.source, { lines: 0, follow: false, resume: { timestamp: stamp } }, vars));
    expect((since.stdout + since.stderr).split('\n').filter(Boolean).length).toBeLessThanOrEqual(1);
  });

  it('a missing source is answered as the tool answers it, and core reads that as LOGS_SOURCE_MISSING', async () => {
    const service = new LogsService({
      hosts: {
        hostConfig: (label) => {
          const h = config.hosts.find((x) => x.label === label)!;
          return { ...h, services: h.services.map((s) => ({ ...s, logs: { docker: 'no-such-container' } })) } as typeof h;
        },
        execStream,
      },
    });
    await expect(service.tail('l20-poc', 'qwen', { lines: 10 })).rejects.toMatchObject({ code: 'LOGS_SOURCE_MISSING' });
  });

  it("through core's LogsService: a tail shows each engine's start-up with the source's timestamps", async () => {
    const service = logs();
    for (const h of config.hosts) {
      for (const s of h.services) {
        const r = await service.tail(h.label, s.id, { lines: 400 });
        const lines = r.entries.filter((e): e is Extract<LogEntry, { type: 'line' }> => e.type === 'line');
        expect(r.source.timestamps, `${h.label}/${s.id}`).toBe(true);
        expect(lines.every((l) => l.ts !== null && l.ts <= Date.now()), `${h.label}/${s.id}`).toBe(true);
        const text = lines.map((l) => l.text).join('\n');
        expect(text, `${h.label}/${s.id}`).toMatch(s.kind !== 'llama-server' ? /vLLM API server version [\s\S]*Application startup complete\./ : /srv +load_model: loading model [\s\S]*main: server is listening on http:\/\/127\.0\.0\.1:8080/);
      }
    }
    service.dispose();
  });

  it('a follow streams a restart as it happens, ends its remote reader when unfollowed, and a restart with the OOM knob ends in CUDA OOM and stays down', async () => {
    const service = logs();
    const host = fleet.host('l20-poc');
    const { log } = host.serviceLog('qwen');
    const follow = await service.follow('l20-poc', 'qwen', { lines: 5 });
    const got: LogEntry[] = [];
    follow.queue.onDidQueue(() => got.push(...follow.queue.take()));
    await until(() => log.onDidAppend.listenerCount === 1, { timeoutMs: 5_000 });
    host.setOomOnRestart('qwen', true);
    const restart = await host.run('docker compose -f /srv/vllm/compose.yaml restart vllm');
    expect(restart.code).toBe(0);
    const texts = () => got.flatMap((e) => (e.type === 'line' ? [e.text] : []));
    await until(() => got.some((e) => e.type === 'line' && e.failure === 'cuda-oom'), { timeoutMs: 10_000 });
    expect(texts().join('\n')).toMatch(/Application shutdown complete\.[\s\S]*vLLM API server version[\s\S]*torch\.OutOfMemoryError: CUDA out of memory[\s\S]*RuntimeError: Engine core initialization failed/);
    expect(host.simulator('qwen').state()).toMatchObject({ process: 'down', failure: 'cuda-oom' });
    expect(got.filter((e) => e.type === 'line').every((e) => e.type === 'line' && e.ts !== null)).toBe(true);
    // Unfollowed: the channel closes, the demo's reader stops listening to the log.
    service.unfollow(follow.id);
    await until(() => log.onDidAppend.listenerCount === 0, { timeoutMs: 5_000 });
    host.setOomOnRestart('qwen', false);
    await host.run('docker compose -f /srv/vllm/compose.yaml restart vllm');
    await until(() => host.simulator('qwen').state().process === 'up', { timeoutMs: 10_000 });
    service.dispose();
  }, 30_000);

  it('and every log command the console sent was one the demo knows', () => {
    const logSent = sent.filter((s) => /journalctl|docker|tail/.test(s.command));
    expect(logSent.length).toBeGreaterThan(10);
    expect(logSent.filter((s) => s.code !== 0 && !s.command.includes('no-such-container'))).toEqual([]);
  });
});

// Host health and GPU processes (issue #29 items 2, 3): core's health command,
// full and fast, on every demo host, read by core's own parser and matcher.
describe("the console's host-health command on the demo hosts", () => {
  const command = (mode: 'full' | 'fast', vendor: 'nvidia' | 'amd', dockerRoot: string | null = null) =>
    healthCommand({ mode, gpuVendor: vendor, cacheSizeTimeoutS: 60, modelCache: [DEFAULT_MODEL_CACHE], dockerRoot, kernelLog: 'auto', kernelLogSinceS: null });

  it('is answered completely on every host: every figure read, no issue, each service port held by a process the process table shows', async () => {
    for (const host of config.hosts) {
      const vendor = AMD.includes(host.label) ? 'amd' : 'nvidia';
      for (const mode of ['full', 'fast'] as const) {
        const r = await execOn(host.label)(command(mode, vendor, mode === 'fast' ? '/var/lib/docker' : null), {});
        expect(r.exitCode, `${host.label}: ${r.stderr}`).toBe(0);
        const h = parseHealthOutput(r.stdout);
        expect(h, r.stdout.slice(0, 200)).not.toBeNull();
        expect(h!.complete).toBe(true);
        expect(h!.issues, host.label).toEqual([]);
        for (const k of ['bootId', 'uptimeS', 'load1', 'load5', 'load15', 'cpuCount', 'memTotalBytes', 'memAvailableBytes', 'swapTotalBytes', 'swapFreeBytes'] as const) {
          expect(h![k], `${host.label} ${mode} ${k}`).not.toBeNull();
        }
        expect(h!.disks.map((d) => [d.kind, d.error])).toEqual([['root', null], ['cache', null], ...(mode === 'fast' ? [['docker', null]] : [])]);
        expect(h!.cacheSizes === null, mode).toBe(mode === 'fast');
        const pids = new Set(h!.processes!.map((p) => p.pid));
        for (const s of host.services) {
          const holders = h!.listeners!.filter((l) => l.port === s.remotePort).flatMap((l) => l.holders);
          expect(holders.length, `${host.label}/${s.id}`).toBeGreaterThan(0);
          expect(holders.every((x) => pids.has(x.pid)), `${host.label}/${s.id}`).toBe(true);
        }
        if (vendor === 'amd') expect(h!.drmClients!.length, host.label).toBeGreaterThan(0);
      }
    }
  });

  it("the GPU processes nvidia-smi lists (the GPU source's compute-apps query) and the AMD card's fdinfo all belong to a configured service", async () => {
    for (const host of config.hosts) {
      const vendor = AMD.includes(host.label) ? 'amd' : 'nvidia';
      const h = parseHealthOutput((await execOn(host.label)(command('fast', vendor), {})).stdout)!;
      let gpus: { index: number; processes: { pid: number | null; name: string | null; usedMemoryMiB: number | null }[] }[];
      if (vendor === 'nvidia') {
        const reading = await new NvidiaSmiSource({ id: `${host.label}/gpu`, exec: execOn(host.label), clock: systemClock, appsEvery: 1 }).scrape();
        if (!reading.ok) throw new Error(JSON.stringify(reading));
        gpus = reading.gpus!.map((g) => ({ index: g.index, processes: g.processes ?? [] }));
      } else {
        gpus = [...amdGpuProcesses(h.drmClients!, h.drmCards!, h.processes)].map(([index, processes]) => ({ index, processes }));
      }
      expect(gpus.flatMap((g) => g.processes).length, host.label).toBeGreaterThan(0);
      const services = host.services.map((s) => ({ id: s.id, remoteHost: s.remoteHost, remotePort: s.remotePort, health: 'ok' as const }));
      const matched = matchGpuProcesses({ gpus, processes: h.processes, listeners: h.listeners, services, sshUser: host.ssh.user });
      expect(matched.flags, host.label).toEqual([]);
      expect(matched.processes.every((p) => p.serviceId !== null), JSON.stringify(matched.processes)).toBe(true);
    }
  });

  it("reads the fault figures on every host through core's parser: NVIDIA ECC, remapped rows and clock event reasons for each GPU, the journal's Xid lines joined to their GPU; the AMD card's critical temperature", async () => {
    for (const host of config.hosts) {
      const vendor = AMD.includes(host.label) ? 'amd' : 'nvidia';
      const tracker = new GpuFaultsTracker();
      const read = async () => tracker.apply(parseHealthOutput((await execOn(host.label)(command('fast', vendor), {})).stdout)!.faults, vendor, Date.now());
      const f = await read();
      expect(f.kernelLog, host.label).toMatchObject({ source: 'journalctl', why: null });
      expect(f.gpus.map((g) => g.gpuIndex), host.label).toEqual(vendor === 'amd' ? [1] : host.gpu?.count === 3 ? [0, 1, 2] : [0]);
      if (vendor === 'amd') {
        expect(f.gpus[0]).toMatchObject({ temperatureCriticalC: 89.8, rasUncorrected: null, throttleReasons: null });
        continue;
      }
      expect(f.issues, host.label).toEqual([]);
      for (const g of f.gpus) {
        expect(g, `${host.label} GPU ${g.gpuIndex}`).toMatchObject({ eccEnabled: true, eccUncorrectedVolatile: 0, eccCorrectedAggregate: 3, retiredPages: 0, retiredPagesPending: false, slowdownSinceMs: null });
        expect(g.throttleReasons, host.label).not.toBeNull();
      }
    }
    const tri = fleet.host('tri-gpu');
    tri.raiseXid({ gpuIndex: 1, xid: 48, process: { pid: 4242, name: 'VLLM::Worker_TP' } });
    tri.setThermalThrottle(2, true);
    try {
      const tracker = new GpuFaultsTracker();
      const f = tracker.apply(parseHealthOutput((await execOn('tri-gpu')(command('fast', 'nvidia'), {})).stdout)!.faults, 'nvidia', 1000);
      expect(f.kernelLog!.xids.map((x) => [x.xid, x.gpuIndex, x.pid])).toEqual([[48, 1, 4242]]);
      expect(f.gpus[1]).toMatchObject({ eccUncorrectedVolatile: 1, retiredPagesPending: true });
      expect(f.gpus[2]).toMatchObject({ throttleReasons: ['hw_slowdown', 'hw_thermal_slowdown'], slowdownSinceMs: 1000 });
    } finally {
      tri.setThermalThrottle(2, false);
    }
  });

  it('and every health command it sent was answered', () => {
    const healthSent = sent.filter((s) => s.command.startsWith('sh -c '));
    expect(healthSent.length).toBeGreaterThanOrEqual(config.hosts.length * 3);
    expect(healthSent.filter((s) => s.code !== 0)).toEqual([]);
  });
});
