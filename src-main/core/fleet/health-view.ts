// The edge for host health, GPU processes and GPU faults: the contract's
// HostHealthView, GpuView.processes / .faults and HostGpuProcessesView, built
// from the fleet's state (snapshot-view.ts calls these; nothing inside the
// console reads the views).
import type { GpuView, HostGpuProcessesView, HostHealthView, KernelLogView } from '../../../src-preload/contract/index.js';
import { diskMarginOf } from '../config/index.js';
import type { HostFaultsState, KernelLogState } from './gpu-faults-state.js';
import { HEALTH_SOURCE_DETAIL, type HostHealthState } from './host-health.js';
import { causeText, type HostGpuProcessesState } from './state.js';

/** Flags shown at most; a host with more says the first ones (the cap keeps the tick bounded). */
const MAX_FLAGS = 64;

export function healthViewOf(h: HostHealthState): HostHealthView {
  const f = h.figures;
  return {
    atMs: h.atMs,
    staleReason: causeText(h.stale),
    source: HEALTH_SOURCE_DETAIL,
    intervalMs: h.intervalMs,
    bootId: f?.bootId ?? null,
    uptimeS: f?.uptimeS ?? null,
    rebootedAtMs: h.rebootedAtMs,
    load1: f?.load1 ?? null,
    load5: f?.load5 ?? null,
    load15: f?.load15 ?? null,
    cpuCount: f?.cpuCount ?? null,
    memTotalBytes: f?.memTotalBytes ?? null,
    memAvailableBytes: f?.memAvailableBytes ?? null,
    swapTotalBytes: f?.swapTotalBytes ?? null,
    swapFreeBytes: f?.swapFreeBytes ?? null,
    disks: (f?.disks ?? []).slice(0, 16).map((d) => ({
      kind: d.kind,
      path: d.path,
      mount: d.mount,
      totalBytes: d.totalBytes,
      usedBytes: d.usedBytes,
      freeBytes: d.freeBytes,
      error: causeText(d.error),
      margin: d.error ? 'unknown' : diskMarginOf(d.freeBytes, d.totalBytes, h.disk),
    })),
    diskThreshold: { freeGiB: h.disk.freeGiB, freePct: h.disk.freePct },
    cacheSizes: h.cacheSizes.slice(0, 8).map((c) => ({ path: c.path, bytes: c.bytes, error: causeText(c.error) })),
    cacheSizesAtMs: h.cacheSizesAtMs,
    docker: h.docker ? { ...h.docker } : null,
    issues: [...h.issues],
    ...(h.faults ? { kernelLog: kernelLogViewOf(h.faults.kernelLog), faultsAtMs: h.faults.atMs, faultIssues: h.faults.issues.slice(0, 10) } : {}),
  };
}

function kernelLogViewOf(k: KernelLogState | null): KernelLogView | null {
  if (k === null) return null;
  return { source: k.source, why: k.why === null ? null : k.why.slice(0, 400), xids: k.xids.slice(-32).map((x) => ({ ...x, text: x.text.slice(0, 500) })) };
}

/** The GPU's fault figures from the host's last fault reading (absent before one, or when it has no row for this GPU). */
export function faultsOnGpu(view: GpuView, f: HostFaultsState | null | undefined): GpuView {
  const g = f?.gpus.find((x) => x.gpuIndex === view.index);
  if (!f || !g) return view;
  const { gpuIndex: _i, uuid: _u, throttleReasons, ...figures } = g;
  view.faults = { atMs: f.atMs, ...figures, throttleReasons: throttleReasons === null ? null : [...throttleReasons], source: f.source.slice(0, 200) };
  return view;
}

/** The GPU's processes (largest first, at most 64) from the host's matched list. */
export function processesOnGpu(view: GpuView, p: HostGpuProcessesState | null): GpuView {
  if (p === null) return view;
  const mine = p.processes.filter((x) => x.gpuIndex === view.index).sort((a, b) => (b.usedMemoryMiB ?? -1) - (a.usedMemoryMiB ?? -1));
  view.processes = mine.slice(0, 64).map((x) => ({ pid: x.pid, name: x.name, user: x.user, usedMemoryMiB: x.usedMemoryMiB, serviceId: x.serviceId, why: x.why }));
  return view;
}

export function gpuProcessesViewOf(p: HostGpuProcessesState): HostGpuProcessesView {
  return { atMs: p.atMs, matchedAtMs: p.matchedAtMs, flags: p.flags.slice(0, MAX_FLAGS).map((f) => ({ ...f })) };
}
