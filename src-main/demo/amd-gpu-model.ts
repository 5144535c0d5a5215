// One simulated AMD APU (Strix Halo class): what the amdgpu driver shows in
// sysfs. The model and its KV cache live in GTT (system RAM mapped for the
// GPU), the VRAM carve-out holds little; busy % follows decoding; hwmon power
// (µW) and edge temperature (m°C) follow load, temperature with a lag.

import type { Clock } from '../core/base/index.js';
import { powerWobble, ThermalLag, type GpuProcess, type GpuShareSource } from './gpu-model.js';
import type { ApuMemoryProfile, GpuProfile } from './profiles.js';

const MIB = 1048576;
const AMBIENT_C = 30;
/** A small-form-factor 120 W box: ~72 °C at 100 W. */
const DEGREES_PER_WATT = 0.42;
const THERMAL_TAU_MS = 25_000;

/** The amdgpu sysfs figures of one card, in the files' own units. */
export interface AmdSysfsSample {
  timestampMs: number;
  /** `card1` */
  card: string;
  productName: string;
  vramTotalBytes: number;
  vramUsedBytes: number;
  gttTotalBytes: number;
  gttUsedBytes: number;
  busyPercent: number;
  /** hwmon power1_input (APUs report no power1_average). */
  powerMicroW: number;
  powerCapMicroW: number;
  tempMilliC: number;
  /** hwmon temp1_crit (edge), m°C. */
  tempCritMilliC: number;
  processes: GpuProcess[];
}

/** The Strix Halo's edge critical temperature, and where it sat when a runaway request throttled it (field notes §2). */
const CRIT_MILLI_C = 89_800;
const RUNAWAY_C = 98;

export class SimAmdGpu {
  readonly apu: ApuMemoryProfile;
  private readonly sources: GpuShareSource[] = [];
  private readonly thermal: ThermalLag;
  private hot = false;

  constructor(
    readonly hostLabel: string,
    readonly index: number,
    readonly profile: GpuProfile,
    private readonly clock: Clock,
  ) {
    if (!profile.apu) throw new Error(`SimAmdGpu needs an APU profile (${profile.name})`);
    this.apu = profile.apu;
    this.thermal = new ThermalLag(AMBIENT_C, DEGREES_PER_WATT, THERMAL_TAU_MS, profile.idlePowerW, clock.now());
  }

  get name(): string {
    return this.profile.name;
  }

  attach(source: GpuShareSource): void {
    this.sources.push(source);
  }

  /** Fault knob: the fanless APU runs past its critical temperature (field notes §2's 98 °C). */
  setThermalThrottle(on: boolean): void {
    this.hot = on;
  }

  sample(): AmdSysfsSample {
    const p = this.profile;
    const now = this.clock.now();
    const shares = this.sources.map((s) => s.gpuShare(this.index));
    const processes = shares.flatMap((s) => (s.process ? [s.process] : []));
    const busy = Math.min(1, shares.reduce((sum, s) => sum + s.busy, 0));
    const resident = shares.some((s) => s.resident);
    const gttTotal = this.apu.gttTotalMiB * MIB;
    const gttUsed = Math.min(gttTotal, (this.apu.gttBaselineUsedMiB + processes.reduce((sum, x) => sum + x.usedMemoryMiB, 0)) * MIB);
    let power = p.idlePowerW + (resident ? p.residentPowerW : 0);
    if (busy > 0) power = p.idlePowerW + p.residentPowerW + (p.peakPowerW - p.idlePowerW - p.residentPowerW) * (0.7 + 0.3 * busy);
    power = Math.min(p.powerLimitW, power * (1 + powerWobble(`${this.hostLabel}/${this.index}`, now)));
    const temperature = Math.max(this.thermal.advance(now, power), this.hot ? RUNAWAY_C : 0);
    // The carve-out holds the framebuffer and a little of each process's context.
    const vramUsedMiB = Math.min(p.memoryTotalMiB, this.apu.vramBaselineUsedMiB + processes.length * 24);
    return {
      timestampMs: now,
      card: this.apu.drmCard,
      productName: p.name,
      vramTotalBytes: p.memoryTotalMiB * MIB,
      vramUsedBytes: vramUsedMiB * MIB,
      gttTotalBytes: gttTotal,
      gttUsedBytes: Math.round(gttUsed),
      busyPercent: busy > 0 ? Math.min(100, Math.round(80 + 20 * busy)) : 0,
      powerMicroW: Math.round(power * 1000) * 1000,
      powerCapMicroW: p.powerLimitW * 1_000_000,
      tempMilliC: Math.round(temperature) * 1000,
      tempCritMilliC: CRIT_MILLI_C,
      processes,
    };
  }
}
