// The built-in demo fleet: simulated GPU hosts behind real ssh2 servers
// (forwards to vLLM- and llama-server-compatible HTTP simulators, exec of
// nvidia-smi or the amdgpu sysfs files, ss and restart commands). Owns its
// keys, known_hosts, servers and timers; time-scalable; or N synthetic hosts
// for benchmarks.

import { join } from 'node:path';
import { writeFile } from 'node:fs/promises';
import { AppError, DisposableStore, silentLogger, systemClock, toDisposable, type Clock, type Disposable, type Logger } from '../core/base/index.js';
import { SimAmdGpu } from './amd-gpu-model.js';
import { DemoErrorCode } from './errors.js';
import { tokenize, type ExecResult } from './exec.js';
import { SimGpu } from './gpu-model.js';
import { ensureDir, fingerprintOf, knownHostsText, loadOrCreateKey } from './keys.js';
import { LLAMA_LISTEN_BACKLOG, LlamaSimulator } from './llama-simulator.js';
import { DEMO_HOSTS, type HostProfile, type ServiceProfile } from './profiles.js';
import { DEMO_SSH_USER, DemoSshServer } from './ssh-server.js';
import { UVICORN_BACKLOG, type TcpListener } from './system-commands.js';
import { startDemoTraffic, type TrafficTarget, type TrafficVia } from './traffic.js';
import { VllmSimulator } from './vllm-simulator.js';

export { VllmSimulator, VLLM_VERSION } from './vllm-simulator.js';
export type { SimulatorState, ProcessState, SleepTag, RestartHandle } from './vllm-simulator.js';
export { LlamaSimulator, KEEPALIVE_MAX_REQUESTS, KEEPALIVE_TIMEOUT_MS } from './llama-simulator.js';
export type { LlamaSimulatorState, LlamaProcessState, LlamaRestartHandle } from './llama-simulator.js';
export { LLAMA_BUILD_INFO } from './llama-shapes.js';
export { SimGpu } from './gpu-model.js';
export type { GpuSample, GpuProcess } from './gpu-model.js';
export { SimAmdGpu, type AmdSysfsSample } from './amd-gpu-model.js';
export { DEMO_SSH_USER } from './ssh-server.js';
export { DemoErrorCode } from './errors.js';
export { demoTrafficTokens, DEMO_TRAFFIC_CLIENTS, type DemoTokenIssuer } from './traffic-tokens.js';
export type { TrafficVia } from './traffic.js';
export { isGibberish } from './text-gen.js';
export { DEMO_HOSTS } from './profiles.js';
export type { HostProfile, ServiceProfile, VllmServiceProfile, LlamaServiceProfile, GpuProfile, ApuMemoryProfile } from './profiles.js';
export { syntheticProfiles, type SyntheticProfileOptions } from './synthetic-profiles.js';

export interface DemoFleetOptions {
  /** Folder where the fleet writes its files (client key 0600, host keys, known_hosts); created if missing. */
  dir: string;
  /** Divides lifecycle durations (sleep, wake, restart, load, idle sleep); decode/prefill rates are not scaled by it. Default 1. */
  timeScale?: number;
  /** Multiplies decode and prefill rates. Default 1. */
  decodeSpeedFactor?: number;
  /** Play background application traffic against the models so the fleet looks alive (default false; tests keep it off). */
  traffic?: boolean;
  /** The hosts to start instead of the built-in three (DEMO_HOSTS), e.g. syntheticProfiles(64). */
  profiles?: readonly HostProfile[];
  logger?: Logger;
  clock?: Clock;
}

export interface DemoServiceConfig {
  id: string;
  kind: 'vllm' | 'llama-server';
  remotePort: number;
  model: string;
  aliases: string[];
  /** vLLM --max-num-seqs, llama-server --parallel (its /props total_slots). */
  slots: number;
  restartCommand: string;
}

export interface DemoHostConfig {
  label: string;
  ssh: { host: '127.0.0.1'; port: number; user: string; identityFile: string };
  knownHostsFile: string;
  gpu: { model: string; count: number };
  pricePerHourUsd: number;
  monthlyBudgetUsd?: number;
  services: DemoServiceConfig[];
}

export interface DemoConfig {
  hosts: DemoHostConfig[];
  /** The built-in fleet's group alias (`chat`: the L20's Qwen, falling back to tri-gpu's Gemma). */
  proxy?: { groups: Record<string, string[]> };
  /** The built-in fleet's monthly budget, so "hours to budget gate" and the budget alerts have something to count against. */
  budget?: { monthlyUsd: number };
}

/** A group alias on the built-in fleet, so the proxy's fallback can be seen and tried (`"model": "chat"`). */
const DEMO_GROUPS: Record<string, string[]> = { chat: ['Qwen3.6-27B-FP8', 'Gemma-3-27B-it'] };
/** The built-in fleet's monthly budget: about 20 days of all three hosts (USD 8.36 an hour together). */
const DEMO_FLEET_BUDGET_USD = 4000;

export interface DemoHostHandle {
  label: string;
  sshPort: number;
  /** `SHA256:...` as `ssh-keygen -l` prints it. */
  hostKeyFingerprint: string;
  /** A vLLM service's simulator. Throws AppError DEMO_UNKNOWN_SERVICE (also for a llama-server service). */
  simulator(serviceId: string): VllmSimulator;
  /** A llama-server service's simulator. Throws AppError DEMO_UNKNOWN_SERVICE (also for a vLLM service). */
  llamaServer(serviceId: string): LlamaSimulator;
  /** The NVIDIA GPUs (none on an AMD host). */
  gpus(): SimGpu[];
  /** The AMD GPUs, read through sysfs (none on an NVIDIA host). */
  amdGpus(): SimAmdGpu[];
}

export interface DemoFleet {
  readonly hosts: DemoHostHandle[];
  readonly config: DemoConfig;
  readonly clientKeyFile: string;
  readonly knownHostsFile: string;
  /** Throws AppError DEMO_UNKNOWN_HOST. */
  host(label: string): DemoHostHandle;
  /**
   * Starts the background traffic (once the console's proxy is up, with `via`
   * half of it goes through the proxy); disposed with the fleet or by its handle.
   */
  startTraffic(via: TrafficVia | null): Disposable;
  /** Closes every server, socket and timer; idempotent. */
  dispose(): Promise<void>;
}

interface StartedHost {
  handle: DemoHostHandle;
  publicLine: string;
  config: DemoHostConfig;
  traffic: TrafficTarget[];
}

/** Clients at the top of a swell: enough to queue on the small L20 and on strix's two slots, a calm OCR and embedding load. */
const TRAFFIC_CLIENTS: Record<string, number> = { qwen: 5, gemma: 6, ocr: 2, embed: 2, coder: 3 };

type Simulator = VllmSimulator | LlamaSimulator;

interface HostContext {
  dir: string;
  clock: Clock;
  logger: Logger;
  timeScale: number;
  decodeSpeedFactor: number;
  clientKeyFile: string;
  knownHostsFile: string;
}

function modelOf(s: ServiceProfile): string {
  return s.engine === 'vllm' ? s.servedModelName : s.alias;
}

function slotsOf(s: ServiceProfile): number {
  return s.engine === 'vllm' ? s.slots : s.parallel;
}

/** The service's listening socket as ss shows it (vLLM: only once serving; llama-server: from the moment it binds). */
function listenerOf(s: ServiceProfile, sim: Simulator): TcpListener | null {
  if (!sim.acceptsConnections) return null;
  if (sim instanceof LlamaSimulator) {
    const pid = sim.state().pid;
    return { address: '127.0.0.1', port: s.remotePort, backlog: LLAMA_LISTEN_BACKLOG, ...(pid !== null ? { process: { name: 'llama-server', pid, fd: 3 } } : {}) };
  }
  // The API server (uvicorn, a python3 process) is not one of the engine processes on the GPUs.
  const enginePid = sim.state().pids[0];
  return { address: '127.0.0.1', port: s.remotePort, backlog: UVICORN_BACKLOG, ...(enginePid !== undefined ? { process: { name: 'python3', pid: enginePid - 3, fd: 27 } } : {}) };
}

async function startHost(
  profile: HostProfile,
  ctx: HostContext,
  clientKey: Awaited<ReturnType<typeof loadOrCreateKey>>,
  store: DisposableStore,
): Promise<StartedHost> {
  const logger = ctx.logger.child(profile.label);
  const hostKey = await loadOrCreateKey(ctx.dir, `host_${profile.label}_ed25519`, `demo host ${profile.label}`);
  const vendor = profile.gpu.vendor ?? 'nvidia';
  const gpus = vendor === 'nvidia' ? Array.from({ length: profile.gpuCount }, (_, i) => new SimGpu(profile.label, i, profile.gpu, ctx.clock)) : [];
  const amdGpus = vendor === 'amd' ? Array.from({ length: profile.gpuCount }, (_, i) => new SimAmdGpu(profile.label, i, profile.gpu, ctx.clock)) : [];
  let pid = 2000 + (hashLabel(profile.label) % 50_000);
  const allocatePid = () => (pid += 7 + (pid % 13));
  const sims = new Map<string, Simulator>();
  for (const service of profile.services) {
    const common = { clock: ctx.clock, logger, timeScale: ctx.timeScale, decodeSpeedFactor: ctx.decodeSpeedFactor, allocatePid };
    const sim: Simulator = service.engine === 'vllm' ? await VllmSimulator.start({ ...common, profile: service }) : await LlamaSimulator.start({ ...common, profile: service });
    store.add(sim);
    sims.set(service.id, sim);
    for (const g of service.gpuIndices) {
      gpus[g]?.attach(sim);
      amdGpus[g]?.attach(sim);
    }
  }
  const simOf = (id: string) => sims.get(id)!;
  const bootMs = ctx.clock.now() - 3 * 86_400_000 - 4 * 3_600_000;
  const ssh = new DemoSshServer({
    hostKey: hostKey.privateKey,
    clientKey: clientKey.publicKey,
    logger,
    targets: profile.services.map((s) => ({
      remotePort: s.remotePort,
      localPort: () => {
        const sim = simOf(s.id);
        return sim.acceptsConnections ? sim.port : null;
      },
    })),
    execHost: {
      hostname: profile.hostname,
      bootMs,
      gpuVendor: vendor,
      nowMs: () => ctx.clock.now(),
      samples: () => gpus.map((g) => g.sample()),
      amdSamples: () => amdGpus.map((g) => g.sample()),
      loadAverage: () => {
        const running = [...sims.values()].reduce((n, s) => n + (s instanceof LlamaSimulator ? s.snapshot().processing : s.snapshot().running), 0);
        return [0.3 + running * 0.9, 0.25 + running * 0.7, 0.2 + running * 0.5];
      },
      // Each server binds 127.0.0.1:<remotePort> (vllm serve --host 127.0.0.1, llama-server --host 127.0.0.1).
      serviceListeners: () => profile.services.flatMap((s) => listenerOf(s, simOf(s.id)) ?? []),
      // Only llama-server processes can be killed here (a ghost's way out); vLLM has no single server process in the demo.
      killProcess: (pid) => [...sims.values()].some((sim) => sim instanceof LlamaSimulator && sim.kill(pid)),
      restartCommands: profile.services.map((s) => ({
        tokens: tokenize(s.restartCommand),
        run: async (): Promise<ExecResult> => {
          // Both `docker compose restart` and `systemctl restart` return once the
          // new process has been started (it is then loading, not yet healthy).
          await simOf(s.id).restart().initiated;
          return { stdout: s.restartOutput.stdout, stderr: s.restartOutput.stderr, code: 0 };
        },
      })),
    },
  });
  const sshPort = await ssh.listen();
  store.add(toDisposable(() => ssh.close()));
  logger.info('demo host listening', { port: sshPort, services: profile.services.map((s) => s.id) });
  const unknown = (serviceId: string, engine: string) =>
    new AppError(DemoErrorCode.UNKNOWN_SERVICE, `demo host ${profile.label} has no ${engine} service "${serviceId}"`, { details: { serviceId } });
  const handle: DemoHostHandle = {
    label: profile.label,
    sshPort,
    hostKeyFingerprint: fingerprintOf(hostKey.publicKey.getPublicSSH()),
    simulator(serviceId) {
      const sim = sims.get(serviceId);
      if (!(sim instanceof VllmSimulator)) throw unknown(serviceId, 'vLLM');
      return sim;
    },
    llamaServer(serviceId) {
      const sim = sims.get(serviceId);
      if (!(sim instanceof LlamaSimulator)) throw unknown(serviceId, 'llama-server');
      return sim;
    },
    gpus: () => [...gpus],
    amdGpus: () => [...amdGpus],
  };
  const config: DemoHostConfig = {
    label: profile.label,
    ssh: { host: '127.0.0.1', port: sshPort, user: DEMO_SSH_USER, identityFile: ctx.clientKeyFile },
    knownHostsFile: ctx.knownHostsFile,
    gpu: { model: profile.gpu.name, count: profile.gpuCount },
    pricePerHourUsd: profile.pricePerHourUsd,
    ...(profile.monthlyBudgetUsd !== undefined ? { monthlyBudgetUsd: profile.monthlyBudgetUsd } : {}),
    services: profile.services.map((s) => ({
      id: s.id,
      kind: s.engine,
      remotePort: s.remotePort,
      model: modelOf(s),
      aliases: [...s.aliases],
      slots: slotsOf(s),
      restartCommand: s.restartCommand,
    })),
  };
  const traffic: TrafficTarget[] = profile.services.map((s) => ({
    simulator: simOf(s.id),
    model: modelOf(s),
    kind: s.engine === 'vllm' ? s.kind : 'generate',
    maxClients: TRAFFIC_CLIENTS[s.id] ?? Math.max(1, Math.ceil(slotsOf(s) / 2)),
  }));
  return { handle, publicLine: hostKey.publicLine, config, traffic };
}

function hashLabel(label: string): number {
  let h = 0;
  for (const c of label) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  return h;
}

export async function startDemoFleet(options: DemoFleetOptions): Promise<DemoFleet> {
  const timeScale = options.timeScale ?? 1;
  const decodeSpeedFactor = options.decodeSpeedFactor ?? 1;
  if (!(timeScale > 0) || !(decodeSpeedFactor > 0)) {
    throw new AppError(DemoErrorCode.BAD_OPTIONS, 'timeScale and decodeSpeedFactor must be positive numbers', { details: { timeScale, decodeSpeedFactor } });
  }
  const profiles = options.profiles ?? DEMO_HOSTS;
  const labels = new Set(profiles.map((p) => p.label));
  if (profiles.length === 0 || labels.size !== profiles.length) {
    throw new AppError(DemoErrorCode.BAD_OPTIONS, 'profiles must name at least one host, each label once', { details: { hosts: profiles.length } });
  }
  const logger = options.logger ?? silentLogger;
  const clock = options.clock ?? systemClock;
  await ensureDir(options.dir);
  const clientKey = await loadOrCreateKey(options.dir, 'client_ed25519', 'gpu-console demo client');
  const knownHostsFile = join(options.dir, 'known_hosts');
  const store = new DisposableStore();
  const started: StartedHost[] = [];
  try {
    for (const profile of profiles) {
      started.push(
        await startHost(profile, { dir: options.dir, clock, logger, timeScale, decodeSpeedFactor, clientKeyFile: clientKey.path, knownHostsFile }, clientKey, store),
      );
    }
    await writeFile(knownHostsFile, knownHostsText(started.map((s) => ({ port: s.handle.sshPort, publicLine: s.publicLine }))), { mode: 0o644 });
  } catch (err) {
    await store.dispose().catch(() => undefined);
    throw err;
  }
  const startTraffic = (via: TrafficVia | null): Disposable =>
    store.add(startDemoTraffic(started.flatMap((s) => s.traffic), { clock, logger: logger.child('traffic'), via }));
  if (options.traffic) startTraffic(null);
  const hosts = started.map((s) => s.handle);
  return {
    hosts,
    config: { hosts: started.map((s) => s.config), ...(profiles === DEMO_HOSTS ? { proxy: { groups: DEMO_GROUPS }, budget: { monthlyUsd: DEMO_FLEET_BUDGET_USD } } : {}) },
    clientKeyFile: clientKey.path,
    knownHostsFile,
    host(label) {
      const h = hosts.find((x) => x.label === label);
      if (!h) throw new AppError(DemoErrorCode.UNKNOWN_HOST, `no demo host named "${label}"`, { details: { label } });
      return h;
    },
    startTraffic,
    dispose: () => store.dispose(),
  };
}
