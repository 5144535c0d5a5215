// A demo host's kernel log and GPU fault answers (issue #29 items 4, 8): the
// `NVRM: Xid` lines an Xid knob adds, printed as Ubuntu 22.04's journalctl -k
// (-o short-iso-precise, systemd 249) and dmesg --time-format iso (util-linux
// 2.37) print them; the health script's fault sections (the nvidia-smi fault
// query through the demo's own nvidia-smi, the amdgpu hwmon/RAS lines). The
// Xid texts follow real kernel lines (test/fixtures/kernel-log/SOURCE.txt).

import { AppError } from '../core/base/index.js';
import type { AmdSysfsSample } from './amd-gpu-model.js';
import { DemoErrorCode } from './errors.js';
import type { GpuSample } from './gpu-model.js';
import { runNvidiaSmi } from './nvidia-smi.js';

/** What the kernel prints after `NVRM: Xid (PCI:…): N, pid=…, name=…, ` for the Xids a knob may raise. */
const XID_TEXT: Record<number, string> = {
  13: 'Graphics SM Warp Exception on (GPC 4, TPC 1, SM 0): Out Of Range Address',
  31: 'Ch 00000008, intr 00000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_3 faulted @ 0x7f4c_3e000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ',
  43: 'Ch 00000010',
  45: 'Ch 00000001',
  48: 'An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 0, subpartition 0.',
  63: 'Row Remapper: New row marked for remapping, reset gpu to activate.',
  79: 'GPU has fallen off the bus.',
  94: 'Contained: CE User Channel (0x9). RST: No, D-RST: No',
  109: 'Ch 00000008, errorString CTX SWITCH TIMEOUT, Info 0x58005',
};
export const DEMO_XIDS: readonly number[] = Object.keys(XID_TEXT).map(Number);
/** Xids that come with an uncorrectable ECC error (the counters and a pending row remap follow). */
const ECC_XIDS = new Set([48, 63, 94]);

export interface XidKnob {
  gpuIndex: number;
  xid: number;
  /** The process the driver names; null: `pid='<unknown>', name=<unknown>` as the kernel prints it then. */
  process?: { pid: number; name: string } | null;
  /** When the kernel logged it (default: now). */
  atMs?: number;
}

interface KernelLine {
  atMs: number;
  text: string;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');
/** UTC, as the demo hosts run: `2026-12-05T04:21:07.123456+0000` (journalctl) or `…,123456+00:00` (dmesg). */
function isoUtc(ms: number, sep: '.' | ',', zone: string): string {
  const d = new Date(ms);
  const date = `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
  return `${date}${sep}${pad(d.getUTCMilliseconds(), 3)}${pad((ms * 7) % 1000, 3)}${zone}`;
}

export class DemoKernelLog {
  private readonly lines: KernelLine[] = [];

  constructor(
    private readonly hostname: string,
    private readonly nowMs: () => number,
    private readonly bootMs: () => number,
    /** The GPU's pci.bus_id (nvidia-smi's form) by index; null on a host without NVIDIA GPUs. */
    private readonly busIdOf: (gpuIndex: number) => string | null,
  ) {}

  /** Knob: the driver logs an Xid for GPU `gpuIndex`. Throws DEMO_BAD_OPTIONS for a GPU or Xid the demo does not have. */
  raiseXid(k: XidKnob): void {
    const bus = this.busIdOf(k.gpuIndex);
    const text = XID_TEXT[k.xid];
    if (bus === null || text === undefined) {
      throw new AppError(DemoErrorCode.BAD_OPTIONS, bus === null ? `this demo host has no NVIDIA GPU ${k.gpuIndex}` : `the demo raises Xid ${DEMO_XIDS.join(', ')}, not ${k.xid}`, { details: { ...k } });
    }
    // nvidia-smi's 00000000:41:00.0 is the kernel's PCI:0000:41:00.
    const m = /^[0-9A-Fa-f]*([0-9A-Fa-f]{4}):([0-9A-Fa-f]{2}):([0-9A-Fa-f]{2})/.exec(bus)!;
    const who = k.process ? `pid=${k.process.pid}, name=${k.process.name}` : "pid='<unknown>', name=<unknown>";
    const line = `NVRM: Xid (PCI:${m[1]}:${m[2]!.toLowerCase()}:${m[3]}): ${k.xid}, ${k.xid === 79 ? '' : `${who}, `}${text}`;
    this.lines.push({ atMs: k.atMs ?? this.nowMs(), text: line });
    this.lines.sort((a, b) => a.atMs - b.atMs);
  }

  static isEccXid(xid: number): boolean {
    return ECC_XIDS.has(xid);
  }

  /** The Xid lines of this boot from `sinceS` (0: all), as `journalctl -k -o short-iso-precise` prints them. */
  journal(sinceS: number): string[] {
    const from = Math.max(this.bootMs(), sinceS * 1000);
    return this.lines.filter((l) => l.atMs >= from && l.atMs <= this.nowMs()).map((l) => `${isoUtc(l.atMs, '.', '+0000')} ${this.hostname} kernel: ${l.text}`);
  }

  /** The ring buffer's Xid lines as `dmesg --time-format iso` prints them. */
  dmesg(): string[] {
    return this.lines.filter((l) => l.atMs >= this.bootMs() && l.atMs <= this.nowMs()).map((l) => `${isoUtc(l.atMs, ',', '+00:00')} ${l.text}`);
  }
}

/** The health script's kernel-log part for `klog` ($4) and `ks` ($5): the SSH user (ops, in adm as Ubuntu's first user) reads the journal. */
export function kernelLogSection(log: DemoKernelLog, klog: string, ks: string, nowMs: number): string[] {
  if (klog === 'off') return [];
  const out = [`@klog_now ${Math.floor(nowMs / 1000)}`];
  if (klog === 'dmesg') return [...out, '@klog dmesg', ...log.dmesg().slice(-32)];
  return [...out, '@klog journalctl', ...log.journal(/^\d+$/.test(ks) ? Number(ks) : 0).slice(-32)];
}

/** The nvidia-smi fault query as the script's loop runs it: the first query answers on driver 570. */
export function nvidiaFaultSection(queries: readonly string[], samples: GpuSample[]): string[] {
  const out: string[] = [];
  for (const q of queries) {
    const r = runNvidiaSmi([`--query-gpu=${q}`, '--format=csv,nounits'], samples);
    const text = (r.stdout + r.stderr).trimEnd();
    out.push(`@nvq ${r.code} ${q}`, ...text.split('\n').slice(0, 65));
    if (r.code === 0 || !text.includes('is not a valid field')) break;
  }
  return out;
}

/** The amdgpu hwmon (edge temperature and its critical limit) of each card; an APU has no RAS counters. */
export function amdFaultSection(samples: readonly AmdSysfsSample[]): string[] {
  const out = ['@amdfaults'];
  for (const s of samples) out.push(`temp ${s.card} temp1 edge ${s.tempMilliC} ${s.tempCritMilliC}`, `noras ${s.card}`);
  return out;
}
