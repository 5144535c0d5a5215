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
import { runNvidiaSmi, type ExecResult } from './nvidia-smi.js';

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

/** What every boot logs before anything fails (offset from boot in ms, text); the NVRM line only on NVIDIA hosts. */
const BOOT_LINES: readonly [number, string, boolean][] = [
  [0, 'Linux version 5.15.0-125-generic (buildd@lcy02-amd64-034) (gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0, GNU ld (GNU Binutils for Ubuntu) 2.38) #135-Ubuntu SMP Fri Sep 27 13:53:58 UTC 2024 (Ubuntu 5.15.0-125.135-generic 5.15.163)', false],
  [0, 'Command line: BOOT_IMAGE=/vmlinuz-5.15.0-125-generic root=/dev/nvme0n1p2 ro quiet splash', false],
  [6_212, 'nvidia: module license \'NVIDIA\' taints kernel.', true],
  [6_530, 'NVRM: loading NVIDIA UNIX x86_64 Kernel Module  570.133.20  Fri Feb 28 02:07:55 UTC 2025', true],
  [9_004, 'EXT4-fs (nvme0n1p2): mounted filesystem with ordered data mode. Opts: (null). Quota mode: none.', false],
];

export class DemoKernelLog {
  private readonly lines: KernelLine[] = [];

  constructor(
    private readonly hostname: string,
    private readonly nowMs: () => number,
    private readonly bootMs: () => number,
    /** The GPU's pci.bus_id (nvidia-smi's form) by index; null on a host without NVIDIA GPUs. */
    private readonly busIdOf: (gpuIndex: number) => string | null,
  ) {}

  /** This boot's kernel lines up to now, oldest first: the boot's own, then what the knobs logged. */
  private current(): KernelLine[] {
    const boot = this.bootMs();
    const nvidia = this.busIdOf(0) !== null;
    const own = BOOT_LINES.filter(([, , nv]) => nvidia || !nv).map(([at, text]) => ({ atMs: boot + at, text }));
    return [...own, ...this.lines.filter((l) => l.atMs >= boot && l.atMs <= this.nowMs())];
  }

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

  /** This boot's kernel lines from `sinceS` (0: all), as `journalctl -k -o short-iso-precise` prints them. */
  journal(sinceS: number): string[] {
    return this.current()
      .filter((l) => l.atMs >= sinceS * 1000)
      .map((l) => `${isoUtc(l.atMs, '.', '+0000')} ${this.hostname} kernel: ${l.text}`);
  }

  /** The ring buffer as `dmesg --time-format iso` prints it, or (`monotonic`) as plain `dmesg` does. */
  dmesg(monotonic = false): string[] {
    const boot = this.bootMs();
    return this.current().map((l) => (monotonic ? `[${((l.atMs - boot) / 1000).toFixed(6).padStart(12)}] ${l.text}` : `${isoUtc(l.atMs, ',', '+00:00')} ${l.text}`));
  }
}

const isXid = (line: string) => line.includes('NVRM: Xid');

/**
 * `journalctl -k [-b] [-q] [--no-pager] [-o short-iso-precise] [-n N] [--since @S]` and `dmesg [--time-format iso]` as an
 * operator types them (the SSH user is in adm, as Ubuntu's first user is); null when argv is neither.
 */
export function answerKernelCommand(argv: readonly string[], log: DemoKernelLog): ExecResult | null {
  if (argv[0] === 'dmesg') {
    const rest = argv.slice(1);
    const iso = rest.length === 2 && rest[0] === '--time-format' && rest[1] === 'iso';
    if (rest.length > 0 && !iso) return { stdout: '', stderr: `dmesg: unrecognized option '${rest[0]}'\nTry 'dmesg --help' for more information.\n`, code: 1 };
    return { stdout: log.dmesg(!iso).map((l) => `${l}\n`).join(''), stderr: '', code: 0 };
  }
  if (argv[0] !== 'journalctl' || !(argv.includes('-k') || argv.includes('--dmesg'))) return null;
  let sinceS = 0;
  let lines: number | null = null;
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--since' && /^@\d+$/.test(argv[i + 1] ?? '')) sinceS = Number(argv[++i]!.slice(1));
    else if (a === '-n' && /^\d+$/.test(argv[i + 1] ?? '')) lines = Number(argv[++i]);
    else if (a === '-o' && argv[i + 1] === 'short-iso-precise') i++;
    else if (!['-k', '--dmesg', '-b', '-q', '--quiet', '--no-pager'].includes(a)) return { stdout: '', stderr: `journalctl: unrecognized option '${a}'\n`, code: 1 };
  }
  const out = log.journal(sinceS);
  return { stdout: (lines === null ? out : out.slice(-lines)).map((l) => `${l}\n`).join(''), stderr: '', code: 0 };
}

/** The health script's kernel-log part for `klog` ($4) and `ks` ($5): the SSH user (ops, in adm as Ubuntu's first user) reads the journal. */
export function kernelLogSection(log: DemoKernelLog, klog: string, ks: string, nowMs: number): string[] {
  if (klog === 'off') return [];
  const out = [`@klog_now ${Math.floor(nowMs / 1000)}`];
  // The script's `| grep … | tail -n 32`.
  if (klog === 'dmesg') return [...out, '@klog dmesg', ...log.dmesg().filter(isXid).slice(-32)];
  return [...out, '@klog journalctl', ...log.journal(/^\d+$/.test(ks) ? Number(ks) : 0).filter(isXid).slice(-32)];
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
