// `gpu-console status`'s host health lines (issue #29 item 6): disks with the
// disk-margin flag, RAM and swap, load against CPUs, uptime and a reboot, GPU
// processes per GPU and what the console flags (with the command it suggests
// and never runs), and GPU faults when the host reports them. Every figure
// comes from the contract's HostView as the UI gets it; unknown prints "—".
import type { DiskView, GpuFaultsView, HostView, KernelLogView } from '../../src-preload/contract/index.js';
import { diskThresholdText, formatBytes, marginOf, thresholdsOf } from '../core/report/index.js';
import { shown } from './output.js';

const DASH = '—';
const iso = (ms: number | null | undefined) => (typeof ms === 'number' ? new Date(ms).toISOString() : DASH);
const num = (v: number | null | undefined, digits = 2) => (typeof v === 'number' ? v.toFixed(digits) : DASH);

export function renderHostHealth(host: HostView, now: number): string[] {
  const h = host.health;
  if (!h) return ['  health: not read (host health polling is off for this host)'];
  if (h.atMs === null) return [`  health: not read yet${h.staleReason ? ` (${shown(h.staleReason)})` : ''}`];
  const lines = [`  health read ${iso(h.atMs)}${h.staleReason ? `  STALE (${shown(h.staleReason)}): last good figures` : ''}`];
  for (const d of h.disks) lines.push(diskLine(d, thresholdsOf(h)));
  lines.push(`  ram ${usedOf(h.memTotalBytes, h.memAvailableBytes)}  swap ${usedOf(h.swapTotalBytes, h.swapFreeBytes)}`);
  lines.push(`  load ${num(h.load1)} ${num(h.load5)} ${num(h.load15)} on ${h.cpuCount ?? DASH} CPUs  up ${uptime(h.uptimeS)}${rebooted(h.rebootedAtMs, now)}`);
  for (const c of h.cacheSizes) lines.push(`  cache ${shown(c.path)} holds ${c.error ? `${DASH} (${shown(c.error)})` : formatBytes(c.bytes)}${h.cacheSizesAtMs ? ` (measured ${iso(h.cacheSizesAtMs)})` : ''}`);
  for (const issue of h.issues) lines.push(`  health issue: ${shown(issue)}`);
  return lines;
}

/** Per GPU its processes, then what the console flags on the host with the command it suggests. */
export function renderGpuProcesses(host: HostView): string[] {
  const lines: string[] = [];
  if (!host.gpuProcesses) return host.health ? ['  gpu processes: not read yet'] : [];
  for (const gpu of host.gpus) {
    const procs = gpu.processes ?? [];
    if (procs.length === 0) {
      lines.push(`  gpu${gpu.index} processes: none`);
      continue;
    }
    for (const p of procs) {
      const owner = p.serviceId ? `service ${shown(p.serviceId)}` : 'not a configured service';
      lines.push(`  gpu${gpu.index} pid ${p.pid ?? DASH} ${shown(p.name ?? DASH)}  user ${shown(p.user ?? DASH)}  ${p.usedMemoryMiB === null ? DASH : `${p.usedMemoryMiB.toFixed(0)} MiB`}  ${owner} (${shown(p.why)})`);
    }
  }
  for (const f of host.gpuProcesses.flags) {
    lines.push(`  FLAG ${f.code}: ${shown(f.message)}${f.command ? `  — suggested (run it yourself): ${shown(f.command)}` : ''}`);
  }
  return lines;
}

/** GPU faults and the kernel log's Xid events, only where the host has reported them. */
export function renderFaults(host: HostView): string[] {
  const lines: string[] = [];
  for (const gpu of host.gpus) if (gpu.faults) lines.push(faultLine(gpu.index, gpu.faults));
  const k = host.health?.kernelLog;
  if (k) lines.push(...kernelLogLines(k));
  for (const issue of host.health?.faultIssues ?? []) lines.push(`  fault issue: ${shown(issue)}`);
  return lines;
}

function faultLine(index: number, f: GpuFaultsView): string {
  const parts = [
    `ecc ${f.eccEnabled === null ? DASH : f.eccEnabled ? 'on' : 'off'}`,
    `uncorrected ${f.eccUncorrectedVolatile ?? DASH} volatile / ${f.eccUncorrectedAggregate ?? DASH} aggregate`,
    `corrected ${f.eccCorrectedVolatile ?? DASH} / ${f.eccCorrectedAggregate ?? DASH}`,
    `retired pages ${f.retiredPages ?? DASH}${f.retiredPagesPending ? ' (pending)' : ''}`,
    `throttle ${f.throttleReasons === null ? DASH : f.throttleReasons.length ? f.throttleReasons.map(shown).join(',') : 'none'}${f.slowdownSinceMs ? ` since ${iso(f.slowdownSinceMs)}` : ''}`,
  ];
  if (f.temperatureCriticalC !== null) parts.push(`critical ${f.temperatureCriticalC} °C`);
  if (f.rasUncorrected !== null || f.rasCorrected !== null) parts.push(`ras ${f.rasUncorrected ?? DASH} uncorrected / ${f.rasCorrected ?? DASH} corrected`);
  return `  gpu${index} faults: ${parts.join('  ')}  (${shown(f.source)}, read ${iso(f.atMs)})`;
}

function kernelLogLines(k: KernelLogView): string[] {
  const head = k.source ? `  kernel log: read with ${k.source}, ${k.xids.length} Xid event(s)` : `  kernel log: not readable — ${shown(k.why ?? 'no reason given')}`;
  return [head, ...k.xids.map((x) => `  Xid ${x.xid} at ${iso(x.atMs)} on gpu${x.gpuIndex ?? DASH}${x.pid !== null ? ` pid ${x.pid}` : ''}: ${shown(x.text)}`)];
}

function diskLine(d: DiskView, t: ReturnType<typeof thresholdsOf>): string {
  const where = `  disk ${d.kind.padEnd(6)} ${shown(d.path)}${d.mount && d.mount !== d.path ? ` (on ${shown(d.mount)})` : ''}`;
  if (d.error) return `${where}  ${DASH} (${shown(d.error)})`;
  const pct = d.freeBytes !== null && d.totalBytes ? ` (${((d.freeBytes / d.totalBytes) * 100).toFixed(1)} %)` : '';
  const flag = marginOf(d, t) === 'low' ? `  LOW: below ${diskThresholdText(t)}` : '';
  return `${where}  free ${formatBytes(d.freeBytes)} of ${formatBytes(d.totalBytes)}${pct}${flag}`;
}

function usedOf(total: number | null, available: number | null): string {
  if (total === null) return `${DASH} used of ${DASH}`;
  return `${available === null ? DASH : formatBytes(total - available)} used of ${formatBytes(total)}`;
}

function uptime(s: number | null): string {
  if (s === null) return DASH;
  const d = Math.floor(s / 86_400);
  const h = Math.floor((s % 86_400) / 3_600);
  const m = Math.floor((s % 3_600) / 60);
  return d > 0 ? `${d}d ${h}h` : h > 0 ? `${h}h ${m}m` : `${m}m`;
}

function rebooted(at: number | null, now: number): string {
  if (at === null) return '';
  return `  REBOOTED ${uptime(Math.max(0, Math.round((now - at) / 1000)))} ago (${iso(at)})`;
}
