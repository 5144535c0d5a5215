// One simulated GPU: static identity plus a sample computed from whatever the
// services placed on it report (memory, busy fraction, processes). Temperature
// lags power with a first-order response on the injected clock.

import { createHash } from 'node:crypto';
import type { Clock } from '../core/base/index.js';
import type { GpuProfile } from './profiles.js';
import { hashString } from './text-gen.js';

export interface GpuProcess {
  pid: number;
  processName: string;
  usedMemoryMiB: number;
}

/** What one service contributes to one GPU right now. */
export interface GpuShare {
  /** Null when the process is gone (restarting). */
  process: GpuProcess | null;
  /** 0..1 share of time kernels run. */
  busy: number;
  /** Weights loaded and awake: the board sits in P0 and draws its resident power. */
  resident: boolean;
}

export interface GpuShareSource {
  gpuShare(gpuIndex: number): GpuShare;
}

export interface GpuSample {
  timestampMs: number;
  index: number;
  name: string;
  uuid: string;
  busId: string;
  serial: string;
  driverVersion: string;
  computeCap: string;
  memoryTotalMiB: number;
  memoryUsedMiB: number;
  memoryFreeMiB: number;
  memoryReservedMiB: number;
  utilizationGpuPct: number;
  utilizationMemoryPct: number;
  powerDrawW: number;
  powerLimitW: number;
  temperatureC: number;
  /** Passive datacenter boards report no fan. */
  fanSpeedPct: number | null;
  pstate: string;
  smClockMHz: number;
  maxSmClockMHz: number;
  memClockMHz: number;
  maxMemClockMHz: number;
  processes: GpuProcess[];
  /** Active clock event reasons by nvidia-smi's field names (`gpu_idle`, `hw_thermal_slowdown`, …). */
  throttleReasons: string[];
  /** ECC counts: volatile since the driver loaded, aggregate over the board's life. */
  ecc: { correctedVolatile: number; uncorrectedVolatile: number; correctedAggregate: number; uncorrectedAggregate: number };
  /** Rows remapped after uncorrectable errors, and whether one waits for a GPU reset. */
  remappedRowsUncorrectable: number;
  remapPending: boolean;
}

/** What the fault knobs have done to a GPU. */
interface GpuFaults {
  hot: boolean;
  uncorrectable: number;
  remapPending: boolean;
}

/** A GPU held in HW thermal slowdown sits at its slowdown temperature with the SM clock cut by more than half. */
const SLOWDOWN_C = 91;

const AMBIENT_C = 27;
const DEGREES_PER_WATT = 0.115;
const THERMAL_TAU_MS = 45_000;
const RESERVED_MIB = 609;

/** Temperature that follows power with a first-order lag: ambient + power × °C/W, time constant tauMs. */
export class ThermalLag {
  private temperature: number;
  private lastMs: number;

  constructor(
    private readonly ambientC: number,
    private readonly degreesPerWatt: number,
    private readonly tauMs: number,
    startPowerW: number,
    nowMs: number,
  ) {
    this.temperature = ambientC + startPowerW * degreesPerWatt;
    this.lastMs = nowMs;
  }

  advance(nowMs: number, powerW: number): number {
    const dt = Math.max(0, nowMs - this.lastMs);
    this.lastMs = nowMs;
    const target = this.ambientC + powerW * this.degreesPerWatt;
    this.temperature += (target - this.temperature) * (1 - Math.exp(-dt / this.tauMs));
    return this.temperature;
  }
}

/** A deterministic ±1.5 % wobble per second so charts look alive but tests stay stable. */
export function powerWobble(key: string, nowMs: number): number {
  return ((hashString(`${key}/${Math.floor(nowMs / 1000)}`) % 1000) / 1000 - 0.5) * 0.03;
}

export class SimGpu {
  readonly uuid: string;
  readonly busId: string;
  readonly serial: string;
  private readonly sources: GpuShareSource[] = [];
  private readonly thermal: ThermalLag;
  private readonly faults: GpuFaults = { hot: false, uncorrectable: 0, remapPending: false };

  constructor(
    readonly hostLabel: string,
    readonly index: number,
    readonly profile: GpuProfile,
    private readonly clock: Clock,
  ) {
    const hex = createHash('sha256').update(`demo-gpu/${hostLabel}/${index}`).digest('hex');
    this.uuid = `GPU-${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
    this.busId = profile.busIds[index] ?? `00000000:${(index + 1).toString(16).padStart(2, '0')}:00.0`;
    this.serial = String(1320000000000 + (hashString(`${hostLabel}/${index}`) % 1_000_000_000));
    this.thermal = new ThermalLag(AMBIENT_C, DEGREES_PER_WATT, THERMAL_TAU_MS, profile.idlePowerW, clock.now());
  }

  get name(): string {
    return this.profile.name;
  }

  get memoryTotalMiB(): number {
    return this.profile.memoryTotalMiB;
  }

  attach(source: GpuShareSource): void {
    this.sources.push(source);
  }

  /** Fault knob: the board overheats (a failed fan, a blocked inlet): HW thermal slowdown until cleared. */
  setThermalThrottle(on: boolean): void {
    this.faults.hot = on;
  }

  /** Fault knob: an uncorrectable ECC error (Xid 48 / 94): counted, and a row remap waits for a GPU reset. */
  addUncorrectableEcc(): void {
    this.faults.uncorrectable++;
    this.faults.remapPending = true;
  }

  sample(): GpuSample {
    const p = this.profile;
    const now = this.clock.now();
    const shares = this.sources.map((s) => s.gpuShare(this.index));
    const processes = shares.flatMap((s) => (s.process ? [s.process] : []));
    const busy = Math.min(1, shares.reduce((sum, s) => sum + s.busy, 0));
    const used = Math.min(p.memoryTotalMiB - RESERVED_MIB, processes.reduce((sum, x) => sum + x.usedMemoryMiB, 0));
    const wobble = powerWobble(this.uuid, now);
    const resident = shares.some((s) => s.resident);
    let power = p.idlePowerW;
    if (resident) power += p.residentPowerW;
    if (busy > 0) power = p.idlePowerW + p.residentPowerW + (p.peakPowerW - p.idlePowerW - p.residentPowerW) * (0.75 + 0.25 * busy);
    power = Math.min(p.powerLimitW, power * (1 + wobble));
    const hot = this.faults.hot;
    const temperature = Math.max(this.thermal.advance(now, power), hot ? SLOWDOWN_C + wobble * 20 : 0);
    const util = busy > 0 ? Math.min(100, Math.round(88 + 12 * busy)) : 0;
    const smClock = busy > 0 ? p.maxSmClockMHz : resident ? 1410 : 210;
    const reasons = hot ? ['hw_slowdown', 'hw_thermal_slowdown'] : busy > 0 || resident ? [] : ['gpu_idle'];
    const ue = this.faults.uncorrectable;
    return {
      timestampMs: now,
      index: this.index,
      name: p.name,
      uuid: this.uuid,
      busId: this.busId,
      serial: this.serial,
      driverVersion: p.driverVersion,
      computeCap: p.computeCap,
      memoryTotalMiB: p.memoryTotalMiB,
      memoryUsedMiB: Math.round(used),
      memoryFreeMiB: p.memoryTotalMiB - RESERVED_MIB - Math.round(used),
      memoryReservedMiB: RESERVED_MIB,
      utilizationGpuPct: util,
      utilizationMemoryPct: busy > 0 ? Math.round(30 + 25 * busy) : 0,
      powerDrawW: Math.round(power * 100) / 100,
      powerLimitW: p.powerLimitW,
      temperatureC: Math.round(temperature),
      fanSpeedPct: null,
      pstate: resident || busy > 0 ? 'P0' : 'P8',
      smClockMHz: hot ? Math.min(smClock, Math.round(p.maxSmClockMHz * 0.42)) : smClock,
      maxSmClockMHz: p.maxSmClockMHz,
      memClockMHz: resident ? p.maxMemClockMHz : 405,
      maxMemClockMHz: p.maxMemClockMHz,
      processes,
      throttleReasons: reasons,
      ecc: { correctedVolatile: 0, uncorrectedVolatile: ue, correctedAggregate: 3, uncorrectedAggregate: ue },
      remappedRowsUncorrectable: this.faults.remapPending ? 0 : ue,
      remapPending: this.faults.remapPending,
    };
  }
}
