// The built-in demo fleet: simulated GPU hosts behind real ssh2 servers
// (forwards to vLLM- and llama-server-compatible HTTP simulators, exec of
// nvidia-smi or the amdgpu sysfs files, ss and restart commands). Owns its
// keys, known_hosts, servers and timers; time-scalable; or N synthetic hosts
// for benchmarks. Not part of core (core never imports it): a bridge starts it
// and hands the console its config, as plain data a config file would hold, or
// `gpu-console demo-fleet` runs it as its own process and writes that file.

import { join } from 'node:path';
import { writeFile } from 'node:fs/promises';
import { AppError, DisposableStore, silentLogger, systemClock, type Clock, type Disposable, type Logger } from '../core/base/index.js';
import { applyDemoFaults, type DemoFault } from './demo-faults.js';
import { startHost, type DemoHostConfig, type DemoHostHandle, type StartedHost } from './demo-host.js';
import { DemoErrorCode } from './errors.js';
import { ensureDir, knownHostsText, loadOrCreateKey } from './keys.js';
import { DEMO_HOSTS, type HostProfile } from './profiles.js';
import { demoTrafficTokens, type DemoTokenIssuer } from './traffic-tokens.js';
import { startDemoTraffic, type TrafficVia } from './traffic.js';

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
export type { DemoHostHandle, DemoHostConfig, DemoServiceConfig } from './demo-host.js';
export type { ExecResult } from './exec.js';
export type { TrafficVia } from './traffic.js';
export { isGibberish } from './text-gen.js';
export { DEMO_HOSTS } from './profiles.js';
export type { HostProfile, ServiceProfile, VllmServiceProfile, LlamaServiceProfile, GpuProfile, ApuMemoryProfile } from './profiles.js';
export { syntheticProfiles, type SyntheticProfileOptions } from './synthetic-profiles.js';
export { DEFAULT_DEMO_FAULTS, DEMO_FAULT_SYNTAX, demoFaultsOf, parseDemoFault, type DemoFault } from './demo-faults.js';
export { DEMO_XIDS, type XidKnob } from './gpu-faults.js';

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
  /** The config's fleet-wide SSH transport (`ssh.transport`); absent: the console's default. */
  sshTransport?: 'builtin' | 'openssh' | 'auto';
  /** Fault knobs set as the fleet starts (demo-faults.ts; the bridges pass DEFAULT_DEMO_FAULTS for the built-in fleet). Default none. */
  faults?: readonly DemoFault[];
  logger?: Logger;
  clock?: Clock;
}

/** What a config file for this fleet holds (the console validates it as it would the file). */
export interface DemoConfig {
  hosts: DemoHostConfig[];
  /** Says the hosts are simulated: the console's UI and its evidence reports show it. */
  fleet: { simulated: true };
  ssh?: { transport: 'builtin' | 'openssh' | 'auto' };
  /** The built-in fleet's group alias (`chat`: the L20's Qwen, falling back to tri-gpu's Gemma); captured failed requests on, so the Proxy view has some to show. */
  proxy?: {
    groups: Record<string, string[]>;
    capture?: { enabled: boolean };
    /** Request shaping per model (`qwen`: a request without max_tokens gets 256, one above 4096 is held to it). */
    models?: Record<string, { maxTokens: { default: number; ceiling: number; overCeiling: 'clamp' | 'refuse' } }>;
  };
  /** The built-in fleet's monthly budget, so "hours to budget gate" and the budget alerts have something to count against. */
  budget?: { monthlyUsd: number };
}

/** A group alias on the built-in fleet, so the proxy's fallback can be seen and tried (`"model": "chat"`). */
const DEMO_GROUPS: Record<string, string[]> = { chat: ['Qwen3.6-27B-FP8', 'Gemma-3-27B-it'] };
/** Field notes §2's rule (clients MUST set max_tokens), kept for clients that do not: Qwen's default and ceiling. */
const DEMO_MODELS = { qwen: { maxTokens: { default: 256, ceiling: 4096, overCeiling: 'clamp' as const } } };
/** The built-in fleet's monthly budget: about 20 days of all three hosts (USD 8.36 an hour together). */
const DEMO_FLEET_BUDGET_USD = 4000;

/** Why a console on the demo's config refuses to reload its config file (the bridges hand it to startApp). */
export const DEMO_CONFIG_REASON = 'the console runs the built-in demo fleet; start it with --config FILE to use a config file';

/** The console's proxy as the demo's traffic needs it: its URL and its token API. */
export interface DemoProxy extends DemoTokenIssuer {
  url(): string | null;
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
  /**
   * The same, given the console's proxy: half the applications send through it with the demo's own
   * client tokens (made through the proxy's token API, kept in the fleet's folder); without a proxy URL, all direct.
   */
  startTrafficThrough(proxy: DemoProxy): Promise<Disposable>;
  /** Closes every server, socket and timer; idempotent. */
  dispose(): Promise<void>;
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
    await writeFile(knownHostsFile, knownHostsText(started.map((s) => ({ port: s.handle.sshPort, publicLine: s.publicLine }))), { mode: 0o600 });
  } catch (err) {
    await store.dispose().catch(() => undefined);
    throw err;
  }
  const startTraffic = (via: TrafficVia | null): Disposable =>
    store.add(startDemoTraffic(started.flatMap((s) => s.traffic), { clock, logger: logger.child('traffic'), via }));
  if (options.traffic) startTraffic(null);
  const hosts = started.map((s) => s.handle);
  const hostOf = (label: string) => {
    const h = hosts.find((x) => x.label === label);
    if (!h) throw new AppError(DemoErrorCode.UNKNOWN_HOST, `no demo host named "${label}"`, { details: { label } });
    return h;
  };
  try {
    applyDemoFaults(hostOf, options.faults ?? [], clock.now());
  } catch (err) {
    await store.dispose().catch(() => undefined);
    throw err;
  }
  const config: DemoConfig = {
    hosts: started.map((s) => s.config),
    fleet: { simulated: true },
    ...(options.sshTransport ? { ssh: { transport: options.sshTransport } } : {}),
    ...(profiles === DEMO_HOSTS ? { proxy: { groups: DEMO_GROUPS, capture: { enabled: true }, models: DEMO_MODELS }, budget: { monthlyUsd: DEMO_FLEET_BUDGET_USD } } : {}),
  };
  return {
    hosts,
    config,
    clientKeyFile: clientKey.path,
    knownHostsFile,
    host: hostOf,
    startTraffic,
    startTrafficThrough: async (proxy) => {
      const baseUrl = proxy.url();
      return startTraffic(baseUrl ? { baseUrl, tokens: await demoTrafficTokens(proxy, join(options.dir, 'traffic-tokens.json')) } : null);
    },
    dispose: () => store.dispose(),
  };
}
