// What a host's fault figures are across health rounds: each round's reading
// (gpu-faults-parse.ts) plus what only time tells — since when a slowdown
// reason has been active on every read, the Xid events seen so far (deduped
// by the kernel's timestamp and text, the newest 32), and from when the next
// round reads the kernel log. Xid lines are joined to a GPU by PCI bus id.
import { FleetErrorCode } from './errors.js';
import { SLOWDOWN_REASONS, type GpuFaultState, type HostFaultsState, type KernelLogState, type XidEvent } from './gpu-faults-state.js';
import { XID_LINES_CAP } from './gpu-faults-command.js';
import { pciKey, readAmdFaults, readKernelLog, readNvidiaAttempts, type GpuFaultReading, type RawFaults } from './gpu-faults-parse.js';

/** Seconds read again before the last read's host time: lines logged while it ran are not lost (dedupe drops repeats). */
const KERNEL_OVERLAP_S = 60;

export const FAULTS_SOURCE = {
  nvidia: 'nvidia-smi --query-gpu (ECC, retired pages / remapped rows, clock event reasons) in the host-health round; Xid lines from journalctl -k or dmesg',
  amd: 'amdgpu sysfs: hwmon temp*_input/_crit, device/ras/*_err_count, gpu_vram_bad_pages; kernel log from journalctl -k or dmesg',
  none: 'journalctl -k or dmesg (no GPU tooling detected)',
} as const;

const text = (i: { code: string; message: string }) => `${i.code}: ${i.message}`;

export class GpuFaultsTracker {
  private xids: XidEvent[] = [];
  private sinceS: number | null = null;
  private readonly slowdownSince = new Map<number, number>();
  private kernelLog: KernelLogState | null = null;
  private state: HostFaultsState | null = null;

  /** From when (host epoch s) the next round reads the kernel log; null: this boot. */
  get kernelLogSinceS(): number | null {
    return this.sinceS;
  }

  get current(): HostFaultsState | null {
    return this.state;
  }

  /** A reboot: the next read starts at the new boot (the events kept stay, they happened). */
  rebooted(): void {
    this.sinceS = null;
  }

  apply(raw: RawFaults, vendor: 'nvidia' | 'amd' | null, atMs: number): HostFaultsState {
    const read = vendor === 'amd' ? (raw.amd ? readAmdFaults(raw.amd) : null) : readNvidiaAttempts(raw.nvq);
    const issues = (read?.issues ?? []).map(text);
    const gpus = (read?.gpus ?? []).map((g) => this.withSlowdown(g, atMs));
    for (const idx of [...this.slowdownSince.keys()]) if (!gpus.some((g) => g.gpuIndex === idx)) this.slowdownSince.delete(idx);
    const klog = readKernelLog(raw);
    if (klog !== null) {
      if (klog.source === 'journalctl' && klog.hostNowS !== null) this.sinceS = klog.hostNowS - KERNEL_OVERLAP_S;
      this.keepXids(klog.xids);
      if (klog.why !== null) issues.push(text({ code: FleetErrorCode.KERNEL_LOG_DENIED, message: klog.why }));
      this.kernelLog = { source: klog.source, why: klog.why, xids: this.joined(gpus) };
    } else {
      this.kernelLog = this.kernelLog === null ? null : { ...this.kernelLog, xids: this.joined(gpus) };
    }
    this.state = { atMs, gpus, kernelLog: this.kernelLog, issues: issues.slice(0, 10), source: FAULTS_SOURCE[vendor ?? 'none'] };
    return this.state;
  }

  private withSlowdown(g: GpuFaultReading, atMs: number): GpuFaultState {
    const slow = g.throttleReasons?.some((r) => SLOWDOWN_REASONS.includes(r)) ?? false;
    // Unknown breaks the run as much as a read without the reason: "continuously active" is only what was seen.
    if (!slow) this.slowdownSince.delete(g.gpuIndex);
    else if (!this.slowdownSince.has(g.gpuIndex)) this.slowdownSince.set(g.gpuIndex, atMs);
    return { ...g, slowdownSinceMs: this.slowdownSince.get(g.gpuIndex) ?? null };
  }

  private keepXids(fresh: readonly XidEvent[]): void {
    const seen = new Set(this.xids.map((x) => `${x.atMs}|${x.text}`));
    const add = fresh.filter((x) => {
      const key = `${x.atMs}|${x.text}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
    if (add.length === 0) return;
    this.xids = [...this.xids, ...add].sort((a, b) => a.atMs - b.atMs).slice(-XID_LINES_CAP);
  }

  /** The kept events with their GPU: the one whose pci.bus_id is the line's (null when none is). */
  private joined(gpus: readonly GpuFaultState[]): XidEvent[] {
    const byBus = new Map<string, number>();
    for (const g of gpus) {
      const key = g.pciBusId === null ? null : pciKey(g.pciBusId);
      if (key !== null) byBus.set(key, g.gpuIndex);
    }
    return this.xids.map((x) => ({ ...x, gpuIndex: x.pciBusId === null ? null : (byBus.get(x.pciBusId) ?? null) }));
  }
}
