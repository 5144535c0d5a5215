// A host's health, polled slowly on its SSH session: one exec per round (the
// health command), its own interval beside the GPU and service polls (default
// 15 s), the model cache measured every 10 min at low priority. A new boot id
// is a reboot: reported once to the fleet, which publishes it. The last good
// figures stay, with the coded cause, while a round fails.
import { toAppError, type Clock, type Logger } from '../base/index.js';
import { DEFAULT_DISK_THRESHOLDS, type DiskThresholds, type HealthConfig } from '../config/index.js';
import type { ExecRunner } from '../telemetry/index.js';
import { FleetErrorCode } from './errors.js';
import { DEFAULT_MODEL_CACHE, healthCommand } from './host-health-command.js';
import { FAULTS_DEADLINE_S, type KernelLogMode } from './gpu-faults-command.js';
import { GpuFaultsTracker } from './gpu-faults.js';
import type { HostFaultsState } from './gpu-faults-state.js';
import { parseHealthOutput, type CacheSizeReading, type DiskReading, type HealthIssue, type ParsedHealth } from './host-health-parse.js';

/** The fleet's StaleCause (state.ts imports this file's types, so it is spelled here). */
type StaleCause = HealthIssue;

export interface HealthSettings {
  /** 0: host health is off. */
  readonly intervalMs: number;
  readonly cacheSizeIntervalMs: number;
  readonly cacheSizeTimeoutS: number;
  /** The model cache folders: as configured, else (modelCacheConfigured false) the default until servers name theirs. */
  readonly modelCache: readonly string[];
  /** `health.modelCache` was set (host or fleet); otherwise the caches are learned from the servers' model paths. */
  readonly modelCacheConfigured: boolean;
  /** How Xid events are read from the kernel log (default auto: journalctl -k, else dmesg). */
  readonly kernelLog: KernelLogMode;
  /** When a watched disk counts as low (the host's `alerts.disk` over the fleet's over the defaults). */
  readonly disk: DiskThresholds;
}

/** The host's own settings over the fleet's over the defaults, field by field. */
export function healthSettingsOf(host: HealthConfig | undefined, fleet: HealthConfig | undefined, disk: DiskThresholds = DEFAULT_DISK_THRESHOLDS): HealthSettings {
  return {
    disk,
    intervalMs: host?.intervalMs ?? fleet?.intervalMs ?? 15_000,
    cacheSizeIntervalMs: host?.cacheSizeIntervalMs ?? fleet?.cacheSizeIntervalMs ?? 600_000,
    cacheSizeTimeoutS: host?.cacheSizeTimeoutS ?? fleet?.cacheSizeTimeoutS ?? 60,
    modelCache: host?.modelCache ?? fleet?.modelCache ?? [DEFAULT_MODEL_CACHE],
    modelCacheConfigured: (host?.modelCache ?? fleet?.modelCache) !== undefined,
    kernelLog: host?.kernelLog ?? fleet?.kernelLog ?? 'auto',
  };
}

/** A host came back with another boot id than the console saw before: it rebooted. */
export interface HostReboot {
  readonly label: string;
  readonly previousBootId: string;
  readonly bootId: string;
  /** The host's uptime when the console saw it (seconds): the reboot was that long before `atMs`. */
  readonly uptimeS: number | null;
  readonly atMs: number;
}

export interface HostHealthFigures {
  readonly bootId: string | null;
  readonly uptimeS: number | null;
  readonly load1: number | null;
  readonly load5: number | null;
  readonly load15: number | null;
  readonly cpuCount: number | null;
  readonly memTotalBytes: number | null;
  readonly memAvailableBytes: number | null;
  readonly swapTotalBytes: number | null;
  readonly swapFreeBytes: number | null;
  readonly disks: readonly DiskReading[];
}

export interface HostHealthState {
  /** The last good reading's figures; null before the first one. */
  readonly figures: HostHealthFigures | null;
  /** When those figures were read (the console's clock at the answer). */
  readonly atMs: number | null;
  /** Why they are not current; null when the last round succeeded. */
  readonly stale: StaleCause | null;
  /** The model caches' sizes from the last `du` round, and when it ran. */
  readonly cacheSizes: readonly CacheSizeReading[];
  readonly cacheSizesAtMs: number | null;
  /** Docker's root folder, or why it is not known (not installed, not permitted). */
  readonly docker: { readonly rootDir: string | null; readonly why: string | null } | null;
  /** Parts of the last reading that could not be read, `CODE: message` each. */
  readonly issues: readonly string[];
  /** When the console last saw a new boot id. */
  readonly rebootedAtMs: number | null;
  readonly intervalMs: number;
  /** When a disk counts as low for this host: the view's per-disk verdict reads it (config/disk-margin.ts). */
  readonly disk: DiskThresholds;
  /** ECC, retired pages, throttle reasons and Xid events (gpu-faults-state.ts); null before they are read. */
  readonly faults: HostFaultsState | null;
}

export const HEALTH_SOURCE_DETAIL = 'df -PB1, /proc/meminfo, /proc/loadavg, /proc/uptime, boot_id, nproc, ss -ltnpH, ps; du (low priority) of the model cache';

const text = (i: HealthIssue) => `${i.code}: ${i.message}`;

export class HostHealthMonitor {
  private last: ParsedHealth | null = null;
  private figures: HostHealthFigures | null = null;
  private atMs: number | null = null;
  private stale: StaleCause | null = null;
  private cacheSizes: readonly CacheSizeReading[] = [];
  private cacheSizesAtMs: number | null = null;
  private docker: HostHealthState['docker'] = null;
  private issues: readonly string[] = [];
  private rebootedAtMs: number | null = null;
  private nextAtMs = 0;
  private nextFullAtMs = 0;
  /** The caches the last full round measured (joined); null before one. */
  private measuredCaches: string | null = null;
  /**
   * Learned caches the host does not have: a server in a container names the model by its path
   * inside the container (vLLM's `/models/…` behind a volume). Not watched again; configure
   * `health.modelCache` with the host's folder to watch it.
   */
  private readonly notOnHost = new Set<string>();
  /** Learned caches df has read on the host. */
  private readonly onHost = new Set<string>();
  private inFlight = false;
  private readonly faults = new GpuFaultsTracker();
  private vendor: 'nvidia' | 'amd' | null = null;

  constructor(
    private readonly label: string,
    readonly settings: HealthSettings,
    private readonly exec: ExecRunner,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly onReboot: (reboot: HostReboot) => void,
    /** The model files or folders the host's servers say they loaded (null: not known for that service). */
    private readonly modelPaths: () => readonly (string | null)[] = () => [],
  ) {}

  /** The caches watched this round: the configured ones, else those the servers' model paths name (learnedModelCaches). */
  modelCaches(): readonly string[] {
    if (this.settings.modelCacheConfigured) return this.settings.modelCache;
    const learned = learnedModelCaches(this.modelPaths()).filter((p) => !this.notOnHost.has(p));
    // Until df has found a learned folder on the host, the default stays beside it: the cache row never blinks out.
    if (!learned.includes(DEFAULT_MODEL_CACHE) && (learned.length === 0 || learned.some((p) => !this.onHost.has(p)))) learned.push(DEFAULT_MODEL_CACHE);
    return learned.slice(0, 8);
  }

  /** The last answer as parsed (its process table, listeners and DRM clients feed the GPU process match). */
  get parsed(): ParsedHealth | null {
    return this.last;
  }

  due(): boolean {
    return this.settings.intervalMs > 0 && !this.inFlight && this.clock.now() >= this.nextAtMs;
  }

  /** One round. Never throws: a failure becomes the coded stale cause. */
  async run(gpuVendor: 'nvidia' | 'amd' | null): Promise<void> {
    if (this.inFlight) return;
    this.inFlight = true;
    const start = this.clock.now();
    const caches = this.modelCaches();
    const cachesKey = caches.join('\n');
    // Caches learned since the last `du` (the servers answered after the first round) are measured at once.
    const full = start >= this.nextFullAtMs || (this.measuredCaches !== null && cachesKey !== this.measuredCaches);
    this.nextAtMs = start + this.settings.intervalMs;
    const s = this.settings;
    this.vendor = gpuVendor;
    const command = healthCommand({
      mode: full ? 'full' : 'fast',
      gpuVendor,
      cacheSizeTimeoutS: s.cacheSizeTimeoutS,
      modelCache: caches,
      dockerRoot: this.docker?.rootDir ?? null,
      kernelLog: s.kernelLog,
      kernelLogSinceS: this.faults.kernelLogSinceS,
    });
    // A `du` round may take each cache's deadline; a figures-only round is a few cheap reads.
    const timeoutMs = (full ? s.cacheSizeTimeoutS * 1000 * caches.length + 15_000 : 10_000) + FAULTS_DEADLINE_S * 1000;
    try {
      const res = await this.exec(command, { timeoutMs, maxOutputBytes: 1024 * 1024 });
      const at = this.clock.now();
      const parsed = parseHealthOutput(res.stdout);
      if (parsed === null) {
        const line = (res.stderr || res.stdout).trim().split('\n')[0]?.slice(0, 160) ?? '';
        this.stale = { code: FleetErrorCode.HEALTH_EXEC_FAILED, message: `the health command exited ${res.exitCode ?? res.signal ?? '?'}${line ? `: ${line}` : ' without output'}` };
        return;
      }
      if (full) {
        this.nextFullAtMs = start + s.cacheSizeIntervalMs;
        this.measuredCaches = cachesKey;
      }
      this.apply(parsed, at, full);
    } catch (err) {
      const e = toAppError(err, FleetErrorCode.HEALTH_EXEC_FAILED);
      this.stale = { code: e.code, message: e.message };
    } finally {
      this.inFlight = false;
    }
  }

  private apply(p: ParsedHealth, at: number, full: boolean): void {
    // A learned cache the host does not have is no disk of the host's: not shown, not watched again, said once below.
    const absent = (d: DiskReading) => !this.settings.modelCacheConfigured && d.kind === 'cache' && d.error?.code === FleetErrorCode.HEALTH_PATH_MISSING;
    for (const d of p.disks) {
      if (d.kind === 'cache' && d.error === null) this.onHost.add(d.path);
      if (!absent(d) || this.notOnHost.has(d.path)) continue;
      this.notOnHost.add(d.path);
      // The caches left to watch are read with the next poll rather than a full interval later.
      this.nextAtMs = at;
    }
    const previous = this.figures?.bootId ?? null;
    if (previous !== null && p.bootId !== null && p.bootId !== previous) {
      this.rebootedAtMs = at;
      // Docker's root and the caches are read again on a rebooted host.
      this.nextFullAtMs = 0;
      this.logger.info('host rebooted', { previousBootId: previous, bootId: p.bootId, uptimeS: p.uptimeS });
      this.faults.rebooted();
      this.onReboot({ label: this.label, previousBootId: previous, bootId: p.bootId, uptimeS: p.uptimeS, atMs: at });
    }
    this.last = p;
    const { bootId, uptimeS, load1, load5, load15, cpuCount, memTotalBytes, memAvailableBytes, swapTotalBytes, swapFreeBytes } = p;
    const disks = p.disks.filter((d) => !absent(d));
    this.figures = { bootId, uptimeS, load1, load5, load15, cpuCount, memTotalBytes, memAvailableBytes, swapTotalBytes, swapFreeBytes, disks };
    this.atMs = at;
    if (full && p.cacheSizes !== null) {
      this.cacheSizes = p.cacheSizes;
      this.cacheSizesAtMs = at;
    }
    if (full) this.docker = p.docker;
    const issues = [...p.issues, ...disks.flatMap((d) => (d.error ? [d.error] : [])), ...this.cacheSizes.flatMap((c) => (c.error ? [c.error] : []))];
    if (this.notOnHost.size > 0) {
      const named = [...this.notOnHost].slice(0, 3).join(', ');
      issues.push({ code: FleetErrorCode.HEALTH_PATH_MISSING, message: `the servers name model paths this host does not have (paths inside a container?): ${named}; set health.modelCache to the host's folder to watch its size` });
    }
    if (this.docker?.why) issues.push({ code: FleetErrorCode.HEALTH_DOCKER_UNAVAILABLE, message: `Docker's root folder is not known: ${this.docker.why}` });
    this.issues = issues.slice(0, 10).map(text);
    this.faults.apply(p.faults, this.vendor, at);
    this.stale = p.complete ? null : { code: FleetErrorCode.HEALTH_UNPARSEABLE, message: 'the health command was cut short (output cap or deadline); figures after the cut are unknown' };
  }

  /** The session went down: the last figures stay, marked with why (as the GPU figures are). */
  markStale(cause: StaleCause): void {
    if (this.figures !== null) this.stale = cause;
  }

  state(): HostHealthState {
    return {
      figures: this.figures,
      atMs: this.atMs,
      stale: this.stale,
      cacheSizes: this.cacheSizes,
      cacheSizesAtMs: this.cacheSizesAtMs,
      docker: this.docker,
      issues: this.issues,
      rebootedAtMs: this.rebootedAtMs,
      intervalMs: this.settings.intervalMs,
      disk: this.settings.disk,
      faults: this.faults.current,
    };
  }
}

/** Hugging Face's and llama.cpp's download caches: a model inside one is watched as the whole cache. */
const KNOWN_CACHES = /^(.*\/\.cache\/(?:huggingface|llama\.cpp))(?:\/|$)/;

/**
 * The model cache folders the servers' own answers name (issue #29 item 2's
 * default "the paths services' command lines name", read without reading any
 * command line): the folder holding each model file or model folder, or the
 * whole HF / llama.cpp cache a model lies in; `~/.cache/huggingface` too when
 * a server names none (a hub id, a server not read yet). At most 8. A path
 * that is not absolute, holds a control character or is over 1024 characters
 * is not used: it came from a server, and is only ever a quoted argument.
 */
export function learnedModelCaches(paths: readonly (string | null)[]): readonly string[] {
  const out: string[] = [];
  let unknown = paths.length === 0;
  for (const p of paths) {
    // eslint-disable-next-line no-control-regex
    if (p === null || !p.startsWith('/') || p.length > 1024 || /[\u0000-\u001f\u007f]/.test(p)) {
      unknown = true;
      continue;
    }
    const known = KNOWN_CACHES.exec(p);
    const trimmed = p.replace(/\/+$/, '');
    const folder = known ? known[1]! : trimmed.slice(0, trimmed.lastIndexOf('/')) || '/';
    if (!out.includes(folder)) out.push(folder);
  }
  if (unknown && !out.includes(DEFAULT_MODEL_CACHE)) out.push(DEFAULT_MODEL_CACHE);
  return out.slice(0, 8);
}
