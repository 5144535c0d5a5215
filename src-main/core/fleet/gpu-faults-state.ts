// The fleet's model of GPU faults, read with the host-health round: per GPU
// its ECC counts, retired pages / remapped rows, active clock-throttle reasons
// (NVIDIA: nvidia-smi clocks_event_reasons; AMD: hwmon and RAS where sysfs
// exposes them), and the Xid events the kernel log shows. Each figure is null
// when unknown; why it is unknown is in `issues`.

// The reason names and which of them are a slowdown live in the contract, so the
// host view flags exactly what the alert and the tracker count.
import { SLOWDOWN_REASONS, THROTTLE_REASONS, type ThrottleReason } from '../../../src-preload/contract/index.js';

export { SLOWDOWN_REASONS, THROTTLE_REASONS, type ThrottleReason };

export interface GpuFaultState {
  readonly gpuIndex: number;
  readonly uuid: string | null;
  /** `0000:3B:00.0` as nvidia-smi's pci.bus_id (or the DRM device on AMD); joins Xid lines to a GPU. */
  readonly pciBusId: string | null;
  /** ECC on; null when unknown or not supported. */
  readonly eccEnabled: boolean | null;
  readonly eccCorrectedVolatile: number | null;
  readonly eccUncorrectedVolatile: number | null;
  readonly eccCorrectedAggregate: number | null;
  readonly eccUncorrectedAggregate: number | null;
  /** Retired pages (pre-Ampere) or remapped rows (Ampere and later); AMD: bad VRAM pages. */
  readonly retiredPages: number | null;
  /** A retirement / remap waits for the next driver reload or reboot. */
  readonly retiredPagesPending: boolean | null;
  /** Active reasons; [] when none is active; null when unknown. */
  readonly throttleReasons: readonly ThrottleReason[] | null;
  /** Since when (console clock) a SLOWDOWN_REASONS reason has been active on every read; null when none is. */
  readonly slowdownSinceMs: number | null;
  /** AMD hwmon: the critical temperature the driver reports (°C). */
  readonly temperatureCriticalC: number | null;
  /** AMD RAS error counts where readable. */
  readonly rasUncorrected: number | null;
  readonly rasCorrected: number | null;
}

/** One `NVRM: Xid` line from the kernel log. */
export interface XidEvent {
  /** When the kernel logged it (its own timestamp). */
  readonly atMs: number;
  readonly xid: number;
  readonly pciBusId: string | null;
  /** The GPU whose pci.bus_id matches; null when none does. */
  readonly gpuIndex: number | null;
  readonly pid: number | null;
  /** The line as logged (bounded, masked). */
  readonly text: string;
}

export interface KernelLogState {
  /** How it was read; null when neither `journalctl -k` nor `dmesg` is permitted. */
  readonly source: 'journalctl' | 'dmesg' | null;
  /** Why it cannot be read and what would allow it (group or sudo rule); null when read. */
  readonly why: string | null;
  /** Newest last, bounded (32). */
  readonly xids: readonly XidEvent[];
}

export interface HostFaultsState {
  /** When the fault figures were read; null before the first reading. */
  readonly atMs: number | null;
  readonly gpus: readonly GpuFaultState[];
  readonly kernelLog: KernelLogState | null;
  /** Parts that could not be read, `CODE: message` each. */
  readonly issues: readonly string[];
  /** Where they come from, in words. */
  readonly source: string;
}
