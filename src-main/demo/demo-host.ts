// One demo host: its GPUs (NVIDIA, or an AMD card read through sysfs), a
// simulator per model service, and an ssh2 server that forwards to them and
// runs the host's command interpreter; plus the config a console needs to
// reach it and the traffic targets it offers.

import { AppError, toDisposable, type Clock, type DisposableStore, type Logger } from '../core/base/index.js';
import { SimAmdGpu } from './amd-gpu-model.js';
import { DemoErrorCode } from './errors.js';
import { runCommand, tokenize, type ExecHost, type ExecResult } from './exec.js';
import { SimGpu } from './gpu-model.js';
import { DemoKernelLog, type XidKnob } from './gpu-faults.js';
import { DemoHostHealth, type PsProcess } from './host-health.js';
import { fingerprintOf, loadOrCreateKey, type KeyPairFiles } from './keys.js';
import { LLAMA_LISTEN_BACKLOG, LlamaSimulator } from './llama-simulator.js';
import { logPlacesOf, type LogPlaces } from './log-places.js';
import { streamLogCommand, type LogHost, type LogSink, type RunningLog } from './log-stream.js';
import { ServiceLog } from './service-log.js';
import { ServiceLogWriter } from './service-log-writer.js';
import type { HostProfile, ServiceProfile } from './profiles.js';
import { DEMO_SSH_USER, DemoSshServer } from './ssh-server.js';
import { SYSTEM_LISTENERS, UVICORN_BACKLOG, type TcpListener } from './system-commands.js';
import type { TrafficTarget } from './traffic.js';
import { VllmSimulator } from './vllm-simulator.js';

export interface DemoServiceConfig {
  id: string;
  kind: 'vllm' | 'llama-server' | 'sglang' | 'tei';
  remotePort: number;
  model: string;
  aliases: string[];
  /** vLLM --max-num-seqs, llama-server --parallel (its /props total_slots). */
  slots: number;
  restartCommand: string;
  /** Where the console reads its log: the unit's journal, or the compose service's logs. */
  logs: { journal: string } | { compose: { service: string; files: string[] } };
}

export interface DemoHostConfig {
  label: string;
  ssh: { host: '127.0.0.1'; port: number; user: string; identityFile: string };
  knownHostsFile: string;
  gpu: { model: string; count: number };
  pricePerHourUsd: number;
  monthlyBudgetUsd?: number;
  tags?: Record<string, string>;
  services: DemoServiceConfig[];
}

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
  /** Runs one command line as the host's SSH exec does (its command interpreter, no shell). */
  run(command: string): Promise<ExecResult>;
  /** Runs a log command as the host's SSH exec streams it (a follow writes until stopped); null when it is no log command. */
  stream(command: string, sink: LogSink): RunningLog | null;
  /** What a service has logged, and where its log can be read. Throws DEMO_UNKNOWN_SERVICE. */
  serviceLog(serviceId: string): { log: ServiceLog; places: LogPlaces };
  /** Fault knob: while on, each restart of the service ends in CUDA OOM and it stays down. Throws DEMO_UNKNOWN_SERVICE. */
  setOomOnRestart(serviceId: string, on: boolean): void;
  /** Benchmark knob: the service logs `linesPerSec` extra request lines (0: none). Throws DEMO_UNKNOWN_SERVICE. */
  setLogFlood(serviceId: string, linesPerSec: number): void;
  /** Fault knob: the network to the host is cut (SSH connections reset, new ones never answered) or restored. */
  setLinkCut(on: boolean): void;
  /** Fault knob: the service's server stops (down and refusing) until it is restarted (the console's restart, or `restartService`). Throws DEMO_UNKNOWN_SERVICE. */
  stopService(serviceId: string): void;
  /** Starts a stopped service again (as `systemctl restart` would). Throws DEMO_UNKNOWN_SERVICE. */
  restartService(serviceId: string): void;
  /** Fault knob: / (and the model cache on it) down to 8.0 GiB free, or back. */
  setDiskFull(on: boolean): void;
  /** Fault knob: the host rebooted now (a new boot_id, uptime from zero; the services keep running). */
  reboot(): void;
  /**
   * Fault knob: a leftover process of the service's kind holding 9.1 GiB on its first GPU and (onPort, default)
   * listening on its port beside it; its pid, or null when cleared. `kill <pid>` on the host ends it. Throws DEMO_UNKNOWN_SERVICE.
   */
  setGhostProcess(serviceId: string, on: boolean, options?: { onPort?: boolean }): number | null;
  /**
   * Fault knob: the NVIDIA driver logs Xid `xid` for GPU `gpuIndex` in the kernel log (48, 63 and 94 also count an
   * uncorrectable ECC error and leave a row remap pending). Throws DEMO_BAD_OPTIONS (no such GPU, an Xid the demo lacks).
   */
  raiseXid(knob: XidKnob): void;
  /** Fault knob: GPU `gpuIndex` overheats: NVIDIA HW thermal slowdown at 91 °C, the AMD APU at 98 °C past its 89.8 °C critical. Throws DEMO_BAD_OPTIONS. */
  setThermalThrottle(gpuIndex: number, on: boolean): void;
}

export interface StartedHost {
  handle: DemoHostHandle;
  publicLine: string;
  config: DemoHostConfig;
  traffic: TrafficTarget[];
}

/** Clients at the top of a swell: enough to queue on the small L20 and on strix's two slots, a calm OCR and embedding load. */
const TRAFFIC_CLIENTS: Record<string, number> = { qwen: 5, gemma: 6, ocr: 2, embed: 2, coder: 3, sgl: 2, tei: 2 };

type Simulator = VllmSimulator | LlamaSimulator;

export interface HostContext {
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

/** The host's command interpreter's view of it: its GPUs, services, listeners and restart commands. */
function execHostOf(profile: HostProfile, ctx: HostContext, sims: ReadonlyMap<string, Simulator>, gpus: readonly SimGpu[], amdGpus: readonly SimAmdGpu[]): ExecHost {
  const simOf = (id: string) => sims.get(id)!;
  const vendor = profile.gpu.vendor ?? 'nvidia';
  return {
    bootMs: ctx.clock.now() - 3 * 86_400_000 - 4 * 3_600_000,
    hostname: profile.hostname,
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
    servicePort: (remotePort) => {
      const s = profile.services.find((x) => x.remotePort === remotePort);
      const sim = s ? simOf(s.id) : null;
      return sim?.acceptsConnections ? sim.port : null;
    },
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
  };
}

export async function startHost(
  profile: HostProfile,
  ctx: HostContext,
  clientKey: KeyPairFiles,
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
  const execHost = execHostOf(profile, ctx, sims, gpus, amdGpus);
  const kernelLog = new DemoKernelLog(profile.hostname, () => ctx.clock.now(), () => execHost.bootMs, (i) => gpus[i]?.busId ?? null);
  execHost.kernelLog = kernelLog;
  const health = startHealth(profile, ctx, sims, execHost, kernelLog);
  for (const g of [...gpus, ...amdGpus]) g.attach(health);
  const logs = startLogs(profile, ctx, sims, store);
  execHost.logs = logs.host;
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
    execHost,
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
    run: (command) => runCommand(command, execHost),
    stream: (command, sink) => streamLogCommand(tokenize(command), logs.host, sink, tokenize),
    serviceLog(serviceId) {
      const s = logs.byId.get(serviceId);
      if (!s) throw unknown(serviceId, 'model');
      return { log: s.log, places: s.places };
    },

    setLogFlood(serviceId, linesPerSec) {
      const s = logs.byId.get(serviceId);
      if (!s) throw unknown(serviceId, 'model');
      s.writer.setFlood(linesPerSec);
    },
    setLinkCut: (on) => ssh.setLinkCut(on),
    ...processKnobs((serviceId) => sims.get(serviceId) ?? null, (serviceId) => unknown(serviceId, 'model')),
    setDiskFull: (on) => health.setDiskFull(on),
    reboot() {
      health.reboot();
      execHost.bootMs = health.bootMs;
    },
    setGhostProcess(serviceId, on, options) {
      const s = profile.services.find((x) => x.id === serviceId);
      if (!s) throw unknown(serviceId, 'model');
      if (!on) {
        health.setGhost(null);
        return null;
      }
      const ghostPid = allocatePid();
      const name = s.engine === 'vllm' ? 'VLLM::EngineCore' : 'llama-server';
      const port = s.remotePort;
      const listener = options?.onPort === false ? null : { address: '127.0.0.1', port, backlog: s.engine === 'vllm' ? UVICORN_BACKLOG : LLAMA_LISTEN_BACKLOG, process: { name: name.slice(0, 15), pid: ghostPid, fd: 3 } };
      health.setGhost({ pid: ghostPid, name, gpuIndex: s.gpuIndices[0] ?? 0, memoryMiB: 9318, listener });
      return ghostPid;
    },
    raiseXid(knob) {
      kernelLog.raiseXid(knob);
      if (DemoKernelLog.isEccXid(knob.xid)) gpus[knob.gpuIndex]!.addUncorrectableEcc();
    },
    setThermalThrottle(gpuIndex, on) {
      const gpu = gpus[gpuIndex] ?? amdGpus.find((g) => g.apu.drmCard === `card${gpuIndex}`);
      if (!gpu) throw new AppError(DemoErrorCode.BAD_OPTIONS, `demo host ${profile.label} has no GPU ${gpuIndex}`, { details: { gpuIndex } });
      gpu.setThermalThrottle(on);
    },
  };
  const traffic: TrafficTarget[] = profile.services.map((s) => ({
    simulator: simOf(s.id),
    model: modelOf(s),
    kind: s.engine === 'vllm' ? s.kind : 'generate',
    maxClients: TRAFFIC_CLIENTS[s.id] ?? Math.max(1, Math.ceil(slotsOf(s) / 2)),
  }));
  return { handle, publicLine: hostKey.publicLine, config: hostConfigOf(profile, sshPort, ctx), traffic };
}

/** The fault knobs on a service's process: OOM on restart, stopped, restarted. */
function processKnobs(
  simOf: (serviceId: string) => Simulator | null,
  unknown: (serviceId: string) => AppError,
): Pick<DemoHostHandle, 'setOomOnRestart' | 'stopService' | 'restartService'> {
  const sim = (serviceId: string): Simulator => {
    const found = simOf(serviceId);
    if (!found) throw unknown(serviceId);
    return found;
  };
  return {
    setOomOnRestart: (serviceId, on) => sim(serviceId).setOomOnRestart(on),
    stopService: (serviceId) => void sim(serviceId).stop(),
    restartService: (serviceId) => void sim(serviceId).restart(),
  };
}

/** The host as a console's config names it: this fleet's SSH port, client key and known_hosts, and its services. */
function hostConfigOf(profile: HostProfile, sshPort: number, ctx: HostContext): DemoHostConfig {
  return {
    label: profile.label,
    ssh: { host: '127.0.0.1', port: sshPort, user: DEMO_SSH_USER, identityFile: ctx.clientKeyFile },
    knownHostsFile: ctx.knownHostsFile,
    gpu: { model: profile.gpu.name, count: profile.gpuCount },
    pricePerHourUsd: profile.pricePerHourUsd,
    ...(profile.monthlyBudgetUsd !== undefined ? { monthlyBudgetUsd: profile.monthlyBudgetUsd } : {}),
    ...(profile.tags !== undefined ? { tags: { ...profile.tags } } : {}),
    services: profile.services.map((s) => ({
      id: s.id,
      kind: s.engine === 'vllm' ? (s.dialect ?? 'vllm') : s.engine,
      remotePort: s.remotePort,
      model: modelOf(s),
      aliases: [...s.aliases],
      slots: slotsOf(s),
      restartCommand: s.restartCommand,
      logs: logsConfigOf(logPlacesOf(s)),
    })),
  };
}

function logsConfigOf(places: LogPlaces): DemoServiceConfig['logs'] {
  if (places.compose) return { compose: { service: places.compose.service, files: [places.compose.file] } };
  return { journal: places.unit! };
}

interface HostLogs {
  host: LogHost;
  byId: Map<string, { log: ServiceLog; places: LogPlaces; writer: ServiceLogWriter }>;
}

/** Each service's log and the writer that keeps it as its simulator lives; armed with the profile's faults. */
function startLogs(profile: HostProfile, ctx: HostContext, sims: ReadonlyMap<string, Simulator>, store: DisposableStore): HostLogs {
  const byId: HostLogs['byId'] = new Map();
  const gpu = { name: profile.gpu.name, totalMiB: profile.gpu.apu ? profile.gpu.apu.gttTotalMiB : profile.gpu.memoryTotalMiB };
  for (const s of profile.services) {
    const sim = sims.get(s.id)!;
    const places = logPlacesOf(s);
    const log = store.add(new ServiceLog(ctx.clock));
    const writer = store.add(new ServiceLogWriter({ sim, log, clock: ctx.clock, timeScale: ctx.timeScale, places, gpu }));
    if (s.oomOnRestart) sim.setOomOnRestart(true);
    byId.set(s.id, { log, places, writer });
  }
  const services = profile.services.map((s) => ({ ...byId.get(s.id)!, identifier: s.engine === 'vllm' ? 'vllm' : 'llama-server' }));
  return { host: { hostname: profile.hostname, services }, byId };
}

/** The host's health answers (host-health.ts), its ghost on `ss` and under `kill`. */
function startHealth(profile: HostProfile, ctx: HostContext, sims: ReadonlyMap<string, Simulator>, execHost: ExecHost, kernelLog: DemoKernelLog): DemoHostHealth {
  const listeners = execHost.serviceListeners!;
  const kill = execHost.killProcess!;
  const health: DemoHostHealth = new DemoHostHealth(
    profile.label,
    {
      hostname: profile.hostname,
      nowMs: () => ctx.clock.now(),
      loadAverage: () => execHost.loadAverage(),
      processes: () => profile.services.flatMap((s) => processesOf(s, sims.get(s.id)!)),
      listeners: () => [...SYSTEM_LISTENERS, ...execHost.serviceListeners!()],
      docker: profile.services.some((s) => logPlacesOf(s).compose !== null),
      amdSamples: execHost.amdSamples,
      gpuSamples: () => execHost.samples(),
      kernelLog,
    },
    execHost.bootMs,
  );
  execHost.serviceListeners = () => [...listeners(), ...health.extraListeners()];
  execHost.killProcess = (pid) => health.kill(pid) || kill(pid);
  execHost.health = health;
  return health;
}

/** A service's processes as ps shows them: llama-server alone; vLLM's API server (python3, in its container's shim for compose) with its engine cores. */
function processesOf(s: ServiceProfile, sim: Simulator): PsProcess[] {
  if (sim instanceof LlamaSimulator) {
    const pid = sim.state().pid;
    return pid === null ? [] : [{ pid, ppid: 1, user: 'ops', comm: 'llama-server' }];
  }
  const pids = sim.state().pids;
  if (pids.length === 0) return [];
  const api = pids[0]! - 3;
  const shim = logPlacesOf(s).compose ? [{ pid: api - 41, ppid: 1, user: 'root', comm: 'containerd-shim' }] : [];
  const engines = pids.map((pid) => ({ pid, ppid: api, user: 'ops', comm: pids.length > 1 ? 'VLLM::Worker_TP' : 'VLLM::EngineCor' }));
  return [...shim, { pid: api, ppid: shim[0]?.pid ?? 1, user: 'ops', comm: 'python3' }, ...engines];
}

function hashLabel(label: string): number {
  let h = 0;
  for (const c of label) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  return h;
}
