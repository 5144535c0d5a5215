// What a demo host answers to the console's host-health command (issue #29
// items 2, 3, 4, 8): `sh -c '<script>' gpu-console-health <mode> <vendor> <du s>
// <klog> <since s> <kind> <path>…`, recognised verbatim since the demo host runs
// no shell, and answered as Ubuntu 22.04 with coreutils, procps, iproute2 and
// the NVIDIA or amdgpu driver would: df -PB1, /proc/meminfo, loadavg, uptime,
// boot_id, nproc, Docker's root, du, ss -ltnpH, ps, on the AMD host the DRM
// fdinfo lines of its GPU processes, the nvidia-smi fault query, the kernel
// log's Xid lines (journalctl -k) and the amdgpu hwmon lines (gpu-faults.ts). The script
// is the demo's own literal (test/unit/demo/command-vocabulary.test.ts pins the
// console's against it). Knobs: a full disk (free below 10 GiB, field notes §1's
// 8.0 GiB), a ghost process holding GPU memory (on a service's port or not:
// field notes §2), a reboot (a new boot_id, uptime from zero).

import { randomUUID } from 'node:crypto';
import type { AmdSysfsSample } from './amd-gpu-model.js';
import type { GpuShare, GpuShareSource } from './gpu-model.js';
import type { ExecResult } from './nvidia-smi.js';
import { amdFaultSection, kernelLogSection, nvidiaFaultSection, type DemoKernelLog } from './gpu-faults.js';
import type { GpuSample } from './gpu-model.js';
import { runSs, type TcpListener } from './system-commands.js';

/** The console's health script as a shell on the host receives it (the demo's own copy). */
export const HEALTH_SCRIPT = [
  'mode=$1; gpu=$2; dus=$3; klog=$4; ks=$5; shift 5',
  'echo "@v 1"',
  'echo "@boot_id $(cat /proc/sys/kernel/random/boot_id 2>/dev/null)"',
  'echo "@uptime $(cat /proc/uptime 2>/dev/null)"',
  'echo "@loadavg $(cat /proc/loadavg 2>/dev/null)"',
  'echo "@nproc $(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null)"',
  'echo "@meminfo"; grep -E "^(MemTotal|MemAvailable|SwapTotal|SwapFree):" /proc/meminfo 2>&1',
  'if [ "$mode" = full ]; then if command -v docker >/dev/null 2>&1; then r=$(timeout 5 docker info -f "{{.DockerRootDir}}" 2>&1) && echo "@docker_root $r" || echo "@docker_error $(printf "%s" "$r" | head -n 1)"; else echo "@docker_error docker is not installed"; fi; fi',
  'if command -v ionice >/dev/null 2>&1; then io="ionice -c3"; else io=""; fi',
  'while [ $# -ge 2 ]; do k=$1; p=$2; shift 2; case $p in "~") p=$HOME;; "~/"*) p=$HOME/${p#??};; esac; echo "@df $k $p"; df -PB1 -- "$p" 2>&1; if [ "$mode" = full ] && [ "$k" = cache ] && [ -d "$p" ]; then s=$(timeout "$dus" nice -n 19 $io du -sxb -- "$p" 2>/dev/null); echo "@du $? ${s%%[!0-9]*} $p"; fi; done',
  'echo "@ss"; ss -ltnpH 2>&1 | head -n 1000',
  'echo "@ps"; ps -e -o pid=,ppid=,user:32=,comm= 2>&1 | head -n 4001',
  'if [ "$gpu" = amd ]; then echo "@drm"; for c in /sys/class/drm/card[0-9] /sys/class/drm/card[0-9][0-9]; do [ -e "$c/device" ] && echo "card ${c##*/} $(basename "$(readlink -f "$c/device")")"; done; echo "@fdinfo"; n=0; for d in /proc/[0-9]*/fdinfo; do [ -r "$d" ] || continue; n=$((n+1)); if [ $n -gt 1024 ]; then echo "capped"; break; fi; grep -s -H -E "^drm-(client-id|pdev|memory-vram|memory-gtt):" "$d"/*; done 2>/dev/null | head -c 262144; echo; fi',
  'if [ "$gpu" = nvidia ]; then for q in "index,uuid,pci.bus_id,ecc.mode.current,ecc.errors.corrected.volatile.total,ecc.errors.uncorrected.volatile.total,ecc.errors.corrected.aggregate.total,ecc.errors.uncorrected.aggregate.total,retired_pages.single_bit_ecc.count,retired_pages.double_bit.count,retired_pages.pending,remapped_rows.correctable,remapped_rows.uncorrectable,remapped_rows.pending,clocks_event_reasons.gpu_idle,clocks_event_reasons.applications_clocks_setting,clocks_event_reasons.sw_power_cap,clocks_event_reasons.hw_slowdown,clocks_event_reasons.hw_thermal_slowdown,clocks_event_reasons.hw_power_brake_slowdown,clocks_event_reasons.sw_thermal_slowdown,clocks_event_reasons.sync_boost" "index,uuid,pci.bus_id,ecc.mode.current,ecc.errors.corrected.volatile.total,ecc.errors.uncorrected.volatile.total,ecc.errors.corrected.aggregate.total,ecc.errors.uncorrected.aggregate.total,retired_pages.single_bit_ecc.count,retired_pages.double_bit.count,retired_pages.pending,remapped_rows.correctable,remapped_rows.uncorrectable,remapped_rows.pending,clocks_throttle_reasons.gpu_idle,clocks_throttle_reasons.applications_clocks_setting,clocks_throttle_reasons.sw_power_cap,clocks_throttle_reasons.hw_slowdown,clocks_throttle_reasons.hw_thermal_slowdown,clocks_throttle_reasons.hw_power_brake_slowdown,clocks_throttle_reasons.sw_thermal_slowdown,clocks_throttle_reasons.sync_boost" "index,uuid,pci.bus_id,ecc.mode.current,ecc.errors.corrected.volatile.total,ecc.errors.uncorrected.volatile.total,ecc.errors.corrected.aggregate.total,ecc.errors.uncorrected.aggregate.total,retired_pages.single_bit_ecc.count,retired_pages.double_bit.count,retired_pages.pending,clocks_throttle_reasons.gpu_idle,clocks_throttle_reasons.applications_clocks_setting,clocks_throttle_reasons.sw_power_cap,clocks_throttle_reasons.hw_slowdown,clocks_throttle_reasons.hw_thermal_slowdown,clocks_throttle_reasons.hw_power_brake_slowdown,clocks_throttle_reasons.sw_thermal_slowdown,clocks_throttle_reasons.sync_boost"; do r=$(timeout 5 nvidia-smi --query-gpu="$q" --format=csv,nounits 2>&1); c=$?; echo "@nvq $c $q"; printf "%s\\n" "$r" | head -n 65; case "$c:$r" in 0:*) break;; *"is not a valid field"*) ;; *) break;; esac; done; fi',
  'if [ "$klog" != off ]; then j=0; echo "@klog_now $(date +%s)"; if [ "$klog" != dmesg ]; then if ! command -v journalctl >/dev/null 2>&1; then echo "@klog journalctl missing"; elif [ -z "$(timeout 3 journalctl -k -b -q -n 1 --no-pager 2>/dev/null)" ]; then echo "@klog journalctl denied $(id -un) $(id -Gn)"; else j=1; echo "@klog journalctl"; if [ "$ks" = 0 ]; then timeout 4 journalctl -k -b -q --no-pager -o short-iso-precise 2>&1; else timeout 4 journalctl -k -q --no-pager -o short-iso-precise --since "@$ks" 2>&1; fi | grep -F "NVRM: Xid" | tail -n 32; fi; fi; if [ $j = 0 ] && [ "$klog" != journalctl ]; then if ! command -v dmesg >/dev/null 2>&1; then echo "@klog dmesg missing"; else echo "@klog dmesg"; timeout 4 dmesg --time-format iso 2>&1 | grep -E "NVRM: Xid|^dmesg: " | tail -n 32; fi; fi; fi',
  'if [ "$gpu" = amd ]; then echo "@amdfaults"; for c in /sys/class/drm/card[0-9] /sys/class/drm/card[0-9][0-9]; do d=$c/device; [ -e "$d/hwmon" ] || continue; n=${c##*/}; for t in "$d"/hwmon/hwmon*/temp*_input; do [ -r "$t" ] || continue; b=${t%_input}; echo "temp $n ${b##*/} $(cat "${b}_label" 2>/dev/null || echo -) $(cat "$t" 2>/dev/null || echo -) $(cat "${b}_crit" 2>/dev/null || echo -)"; done; if [ -d "$d/ras" ]; then for f in "$d"/ras/*_err_count; do [ -e "$f" ] || continue; if [ -r "$f" ]; then echo "ras $n ${f##*/} $(tr "\\n" " " < "$f")"; else echo "ras $n ${f##*/} unreadable"; fi; done; if [ -r "$d/ras/gpu_vram_bad_pages" ]; then echo "badpages $n $(grep -c . "$d/ras/gpu_vram_bad_pages") $(grep -c ": P" "$d/ras/gpu_vram_bad_pages")"; fi; else echo "noras $n"; fi; done; fi',
  'echo "@end"',
].join('; ');

/** The fault query's field lists, as the script's loop names them (the newest first). */
export const FAULT_QUERIES: readonly string[] = [...HEALTH_SCRIPT.matchAll(/"(index,uuid,[^"]+)"/g)].map((m) => m[1]!);

const GIB = 1024 ** 3;
const HOME = '/home/ops';

/** A process as `ps -o pid,ppid,user,comm` shows it (comm: 15 characters, as the kernel keeps it). */
export interface PsProcess {
  pid: number;
  ppid: number;
  user: string;
  comm: string;
}

/** What the health answer reads of its host, right now. */
export interface HealthHostView {
  hostname: string;
  nowMs(): number;
  loadAverage(): [number, number, number];
  /** The model services' processes (servers, engine cores, their container shims). */
  processes(): PsProcess[];
  /** Every listening socket, as `ss -ltn` lists it. */
  listeners(): TcpListener[];
  /** Whether Docker is installed (hosts that run a compose service). */
  docker: boolean;
  /** AMD hosts: the cards and their GPU processes. */
  amdSamples?(): AmdSysfsSample[];
  /** NVIDIA hosts: each GPU as nvidia-smi reads it. */
  gpuSamples?(): GpuSample[];
  /** The kernel log (Xid lines). */
  kernelLog: DemoKernelLog;
}

/** A host's size; the demo's three and any synthetic host. */
const SIZES: Record<string, { cpus: number; ramGiB: number; diskGiB: number; usedGiB: number }> = {
  'l20-poc': { cpus: 8, ramGiB: 64, diskGiB: 200, usedGiB: 131 },
  'tri-gpu': { cpus: 48, ramGiB: 384, diskGiB: 1788, usedGiB: 902 },
  strix: { cpus: 32, ramGiB: 128, diskGiB: 1832, usedGiB: 611 },
};
const DEFAULT_SIZE = { cpus: 16, ramGiB: 128, diskGiB: 932, usedGiB: 400 };

export interface Ghost {
  pid: number;
  name: string;
  gpuIndex: number;
  memoryMiB: number;
  /** Also listens on a service's port (a second listener); null: it only holds GPU memory. */
  listener: TcpListener | null;
}

/**
 * The host's health state and knobs. A GPU share source too: a ghost's memory
 * shows in nvidia-smi (compute apps) and in the AMD card's fdinfo like a real process's.
 */
export class DemoHostHealth implements GpuShareSource {
  private bootId = randomUUID();
  bootMs: number;
  private diskFull = false;
  private ghost: Ghost | null = null;

  constructor(
    private readonly label: string,
    private readonly view: HealthHostView,
    bootMs: number,
  ) {
    this.bootMs = bootMs;
  }

  private get size() {
    return SIZES[this.label] ?? DEFAULT_SIZE;
  }

  /** Knob: the root filesystem (and the model cache on it) fills up to 8.0 GiB free, or back. */
  setDiskFull(on: boolean): void {
    this.diskFull = on;
  }

  /** Knob: the host rebooted just now (a new boot id; uptime from zero). The services are not restarted by it. */
  reboot(): void {
    this.bootId = randomUUID();
    this.bootMs = this.view.nowMs();
  }

  /** Knob: a leftover process holding GPU memory; with a port, also listening on it beside the service. Null clears it. */
  setGhost(ghost: Ghost | null): void {
    this.ghost = ghost;
  }

  get currentGhost(): Ghost | null {
    return this.ghost;
  }

  /** `kill <pid>` of the ghost: it goes away. */
  kill(pid: number): boolean {
    if (this.ghost?.pid !== pid) return false;
    this.ghost = null;
    return true;
  }

  gpuShare(gpuIndex: number): GpuShare {
    const g = this.ghost;
    if (g === null || g.gpuIndex !== gpuIndex) return { process: null, busy: 0, resident: false };
    return { process: { pid: g.pid, processName: g.name, usedMemoryMiB: g.memoryMiB }, busy: 0, resident: true };
  }

  /** The ghost's listener, for `ss` (plain and in the health answer). */
  extraListeners(): TcpListener[] {
    return this.ghost?.listener ? [this.ghost.listener] : [];
  }

  /** The health command's answer, or an operator's own `df` / `free`; null when `argv` is neither. */
  answer(argv: readonly string[]): ExecResult | null {
    if (argv[0] === 'df') return this.operatorDf(argv.slice(1));
    if (argv[0] === 'free') return this.operatorFree(argv.slice(1));
    if (argv.length < 9 || argv[0] !== 'sh' || argv[1] !== '-c' || argv[2] !== HEALTH_SCRIPT) return null;
    const [mode, gpu, klog, ks] = [argv[4], argv[5], argv[7]!, argv[8]!];
    const out = ['@v 1', `@boot_id ${this.bootId}`, `@uptime ${this.uptime()}`, `@loadavg ${this.loadavg()}`, `@nproc ${this.size.cpus}`, '@meminfo', ...this.meminfo()];
    if (mode === 'full') out.push(this.view.docker ? '@docker_root /var/lib/docker' : '@docker_error docker is not installed');
    const pairs = argv.slice(9);
    for (let i = 0; i + 1 < pairs.length; i += 2) out.push(...this.df(pairs[i]!, expand(pairs[i + 1]!), mode === 'full'));
    out.push('@ss', runSs(['-ltnpH'], this.view.listeners()).stdout.trimEnd());
    out.push('@ps', ...this.ps());
    if (gpu === 'amd') out.push(...this.drm());
    if (gpu === 'nvidia') out.push(...nvidiaFaultSection(FAULT_QUERIES, this.view.gpuSamples?.() ?? []));
    out.push(...kernelLogSection(this.view.kernelLog, klog, ks, this.view.nowMs()));
    if (gpu === 'amd') out.push(...amdFaultSection(this.view.amdSamples?.() ?? []));
    out.push('@end');
    return { stdout: out.filter((l) => l !== '').join('\n') + '\n', stderr: '', code: 0 };
  }

  private uptime(): string {
    const up = Math.max(0, (this.view.nowMs() - this.bootMs) / 1000);
    return `${up.toFixed(2)} ${(up * this.size.cpus * 0.93).toFixed(2)}`;
  }

  private loadavg(): string {
    const [a, b, c] = this.view.loadAverage();
    return `${a.toFixed(2)} ${b.toFixed(2)} ${c.toFixed(2)} 2/${412 + this.view.processes().length} ${40000 + (Math.floor(this.view.nowMs() / 1000) % 9999)}`;
  }

  private meminfo(): string[] {
    const totalKiB = this.size.ramGiB * 1024 * 1024 - 1_843_204;
    // Page cache and the servers' host-side buffers: a bit over a third in use, drifting slowly.
    const usedShare = 0.36 + 0.02 * Math.sin(this.view.nowMs() / 600_000);
    const kib = (n: number) => `${String(Math.round(n)).padStart(8)} kB`;
    return [`MemTotal:       ${kib(totalKiB)}`, `MemAvailable:   ${kib(totalKiB * (1 - usedShare))}`, `SwapTotal:      ${kib(8 * 1024 * 1024 - 4)}`, `SwapFree:       ${kib(8 * 1024 * 1024 - 4 - 52_224)}`];
  }

  /** The root filesystem's blocks as df counts them (total, used, available), in bytes. */
  private rootFs(): { total: number; used: number; free: number } {
    const total = this.size.diskGiB * GIB;
    const free = this.diskFull ? 8.0 * GIB : total - this.size.usedGiB * GIB;
    // ext4 keeps 5% for root: Used + Available < 1-blocks, as df shows it.
    return { total, used: total * 0.95 - free, free };
  }

  /**
   * Whether a path exists on the host (everything lives on the root filesystem, as on a cloud VM).
   * `/models` holds the weights where vLLM runs on the host itself; on a host running it under
   * Docker, `/models` is the container's side of a volume and not on the host.
   */
  private onRootFs(path: string): boolean {
    if (path === '/' || path === HOME || path.startsWith(`${HOME}/`) || path.startsWith('/var/lib/docker') || path.startsWith('/srv/')) return true;
    return !this.view.docker && (path === '/models' || path.startsWith('/models/'));
  }

  /** An operator's `df [-h|-H|-k|-m|-P|-B1] [PATH…]`, as coreutils 8.32 prints it for the one root filesystem. */
  private operatorDf(args: readonly string[]): ExecResult {
    const flags = args.filter((a) => a.startsWith('-') && a !== '--');
    const paths = args.filter((a) => !a.startsWith('-'));
    const known = new Set(['-h', '-H', '-k', '-m', '-P', '-B1', '-Ph', '-hP', '-x', '-l', '--']);
    const bad = flags.find((f) => !known.has(f));
    if (bad) return { stdout: '', stderr: `df: invalid option -- '${bad.replace(/^-+/, '')[0] ?? ''}'\nTry 'df --help' for more information.\n`, code: 1 };
    const missing = paths.find((p) => !(this.onRootFs(p) || p === '~' || p.startsWith('~/')));
    if (missing) return { stdout: '', stderr: `df: ${missing}: No such file or directory\n`, code: 1 };
    const { total, used, free } = this.rootFs();
    const human = flags.some((f) => f.includes('h'));
    const bytes = flags.includes('-B1');
    const unit = flags.includes('-m') ? 1024 ** 2 : 1024;
    const fmt = (n: number) => (human ? humanSize(n) : String(Math.round(bytes ? n : n / unit)));
    const pct = `${Math.ceil((used / (used + free)) * 100)}%`;
    const head = human ? 'Filesystem      Size  Used Avail Use% Mounted on' : `Filesystem     ${bytes ? '1B-blocks' : unit === 1024 ? '1K-blocks' : '1M-blocks'}      Used Available Use% Mounted on`;
    const root = `/dev/nvme0n1p2 ${fmt(total).padStart(human ? 5 : 10)} ${fmt(used).padStart(human ? 5 : 9)} ${fmt(free).padStart(human ? 5 : 9)} ${pct.padStart(4)} /`;
    const tmpfs = (mount: string, size: number) => `tmpfs          ${fmt(size).padStart(human ? 5 : 10)} ${fmt(0).padStart(human ? 5 : 9)} ${fmt(size).padStart(human ? 5 : 9)}   0% ${mount}`;
    const rows = paths.length > 0 ? paths.map(() => root) : [tmpfs('/run', 6.3 * GIB / 1024 * 1024 / 10), root, tmpfs('/dev/shm', (this.size.ramGiB * GIB) / 2)];
    return { stdout: [head, ...rows].join('\n') + '\n', stderr: '', code: 0 };
  }

  /** An operator's `free [-b|-k|-m|-g|-h]`, as procps-ng 3.3.17 prints it from the same figures as /proc/meminfo. */
  private operatorFree(args: readonly string[]): ExecResult {
    const units: Record<string, number> = { '-b': 1, '-k': 1024, '-m': 1024 ** 2, '-g': 1024 ** 3 };
    const bad = args.find((a) => !(a in units) && a !== '-h' && a !== '--human' && a !== '-w');
    if (bad) return { stdout: '', stderr: `free: invalid option -- '${bad.replace(/^-+/, '')[0] ?? ''}'\n`, code: 1 };
    const kib = Object.fromEntries(this.meminfo().map((l) => { const m = /^(\w+):\s+(\d+) kB/.exec(l)!; return [m[1]!, Number(m[2]) * 1024]; })) as Record<string, number>;
    const total = kib.MemTotal!, avail = kib.MemAvailable!, swapTotal = kib.SwapTotal!, swapFree = kib.SwapFree!;
    const human = args.includes('-h') || args.includes('--human');
    const div = units[args.find((a) => a in units) ?? '-k']!;
    const f = (n: number) => (human ? humanSize(n, 'i') : String(Math.round(n / div))).padStart(12);
    const buffCache = Math.round((total - avail) * 0.55);
    const used = total - avail;
    const free = Math.max(0, total - used - buffCache);
    return {
      stdout: [
        '               total        used        free      shared  buff/cache   available',
        `Mem:    ${f(total)}${f(used)}${f(free)}${f(Math.round(total * 0.004))}${f(buffCache)}${f(avail)}`,
        `Swap:   ${f(swapTotal)}${f(swapTotal - swapFree)}${f(swapFree)}`,
      ].join('\n') + '\n',
      stderr: '',
      code: 0,
    };
  }

  /** One `@df` section (and `@du` in a full round): everything lives on the root filesystem, as on a cloud VM. */
  private df(kind: string, path: string, full: boolean): string[] {
    const known = this.onRootFs(path);
    if (!known) return [`@df ${kind} ${path}`, `df: ${path}: No such file or directory`];
    const { total, used, free } = this.rootFs();
    const pct = Math.ceil((used / (used + free)) * 100);
    const lines = [
      `@df ${kind} ${path}`,
      'Filesystem        1-blocks         Used    Available Capacity Mounted on',
      `/dev/nvme0n1p2 ${Math.round(total)} ${Math.round(used)} ${Math.round(free)}      ${pct}% /`,
    ];
    if (full && kind === 'cache') lines.push(`@du 0 ${Math.round((this.diskFull ? 0.55 : 0.3) * this.size.usedGiB * GIB)} ${path}`);
    return lines;
  }

  private ps(): string[] {
    const system: PsProcess[] = [
      { pid: 1, ppid: 0, user: 'root', comm: 'systemd' },
      { pid: 2, ppid: 0, user: 'root', comm: 'kthreadd' },
      { pid: 612, ppid: 1, user: 'systemd-resolve', comm: 'systemd-resolve' },
      { pid: 1024, ppid: 1, user: 'root', comm: 'sshd' },
      ...(this.view.docker ? [{ pid: 1188, ppid: 1, user: 'root', comm: 'dockerd' }] : []),
    ];
    const ghost = this.ghost ? [{ pid: this.ghost.pid, ppid: 1, user: 'ops', comm: this.ghost.name.slice(0, 15) }] : [];
    return [...system, ...this.view.processes(), ...ghost].map((p) => `${String(p.pid).padStart(7)} ${String(p.ppid).padStart(7)} ${p.user.padEnd(32)} ${p.comm}`);
  }

  /** AMD: each card's PCI address, and one DRM client (fd 7) per process holding memory on it. */
  private drm(): string[] {
    const samples = this.view.amdSamples?.() ?? [];
    const pdev = (card: string) => `0000:${(0xc3 + Number(card.replace('card', ''))).toString(16)}:00.0`;
    const out = ['@drm', ...samples.map((s) => `card ${s.card} ${pdev(s.card)}`), '@fdinfo'];
    for (const s of samples) {
      for (const p of s.processes) {
        const f = `/proc/${p.pid}/fdinfo/7`;
        out.push(`${f}:drm-client-id:\t${(p.pid % 97) + 11}`, `${f}:drm-pdev:\t${pdev(s.card)}`, `${f}:drm-memory-vram:\t24576 KiB`, `${f}:drm-memory-gtt:\t${Math.round(p.usedMemoryMiB * 1024)} KiB`);
      }
    }
    return out;
  }
}

/** The host's shell expands `~` from $HOME; the demo's SSH user is ops. */
function expand(path: string): string {
  return path === '~' ? HOME : path.startsWith('~/') ? `${HOME}/${path.slice(2)}` : path;
}

/** df -h / free -h sizes: one decimal below 10, powers of 1024 (`G`; free -h: `Gi`). */
function humanSize(bytes: number, suffix = ''): string {
  const units = ['', 'K', 'M', 'G', 'T', 'P'];
  let n = bytes;
  let i = 0;
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024;
    i++;
  }
  if (i === 0) return `${Math.round(n)}${suffix ? 'B' : ''}`;
  return `${n < 10 ? (Math.ceil(n * 10) / 10).toFixed(1) : String(Math.ceil(n))}${units[i]}${suffix}`;
}
