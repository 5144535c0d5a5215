import type { FleetSnapshot, HostView, ServiceHealth, ServiceView, TunnelState } from '../../../src-preload/contract/index.js';

// The fleet as Prometheus text (exposition format 0.0.4), for an existing
// Prometheus / Grafana: hosts, GPUs, services and tunnels in Prometheus naming
// (base units, `_ratio` for 0..1, one-hot `state` label for enums). A figure
// that is unknown — or stale, i.e. the last good one of a failing scrape — is
// left out (the series goes stale in Prometheus), never written as 0. The
// PrometheusApiSource reads the GPU series back (console → Prometheus → console).

const MIB = 1024 * 1024;

/** Series names the Prometheus source reads back; keep the two sides in step. */
export const FLEET_GPU_SERIES = {
  memoryUsedBytes: 'gpu_console_gpu_memory_used_bytes',
  memoryTotalBytes: 'gpu_console_gpu_memory_total_bytes',
  gttUsedBytes: 'gpu_console_gpu_gtt_used_bytes',
  gttTotalBytes: 'gpu_console_gpu_gtt_total_bytes',
  utilizationRatio: 'gpu_console_gpu_utilization_ratio',
  powerWatts: 'gpu_console_gpu_power_watts',
  powerLimitWatts: 'gpu_console_gpu_power_limit_watts',
  temperatureCelsius: 'gpu_console_gpu_temperature_celsius',
} as const;

const TUNNEL_STATES: readonly TunnelState[] = ['idle', 'connecting', 'up', 'degraded', 'reconnecting', 'failed', 'closed'];
const SLEEP_STATES = ['awake', 'asleep-1', 'asleep-2', 'unknown'] as const;
const HEALTH_STATES: readonly ServiceHealth[] = ['ok', 'loading', 'down', 'unknown'];

/** Every family, in output order, with its HELP text. All are gauges but COUNTERS. */
const FAMILIES = {
  gpu_console_host_connected: 'Whether the console holds an SSH session to the host (1) or not (0).',
  gpu_console_host_gpu_figures_stale: 'Whether the last GPU reading of the host failed (1); its GPU figures are then left out.',
  [FLEET_GPU_SERIES.memoryUsedBytes]: 'GPU memory (VRAM) in use.',
  [FLEET_GPU_SERIES.memoryTotalBytes]: 'GPU memory (VRAM) in all.',
  [FLEET_GPU_SERIES.gttUsedBytes]: 'AMD GTT (system memory mapped for the GPU) in use.',
  [FLEET_GPU_SERIES.gttTotalBytes]: 'AMD GTT (system memory mapped for the GPU) in all.',
  [FLEET_GPU_SERIES.utilizationRatio]: 'Share of time the GPU ran kernels (0..1).',
  [FLEET_GPU_SERIES.powerWatts]: 'GPU power draw.',
  [FLEET_GPU_SERIES.powerLimitWatts]: 'GPU power limit.',
  [FLEET_GPU_SERIES.temperatureCelsius]: 'GPU temperature.',
  gpu_console_host_health_stale: 'Whether the last host health round failed (1); its figures are then left out.',
  gpu_console_host_disk_free_bytes: 'Disk space available to an unprivileged user on the filesystem of a watched path (df Available): / , a model cache, Docker\'s root.',
  gpu_console_host_disk_total_bytes: 'Size of the filesystem of a watched path.',
  gpu_console_host_disk_low: "Whether the console judges the disk low (1) or not (0) against the host's own thresholds (alerts.disk, default 10 GiB / 10 %); absent while unknown.",
  gpu_console_host_memory_available_bytes: 'Host RAM available for new work (MemAvailable).',
  gpu_console_host_memory_total_bytes: 'Host RAM in all (MemTotal).',
  gpu_console_host_swap_used_bytes: 'Swap in use (SwapTotal - SwapFree).',
  gpu_console_host_load1: 'Host load average over one minute.',
  gpu_console_host_cpus: 'CPUs online on the host (nproc).',
  gpu_console_host_uptime_seconds: 'Seconds since the host booted (/proc/uptime).',
  gpu_console_host_model_cache_bytes: 'Size of a model cache folder (du, measured every few minutes at low priority).',
  gpu_console_gpu_process_memory_bytes: 'GPU memory held by a process (the largest few per GPU); service is empty when no configured service owns it.',
  gpu_console_host_gpu_process_flags: 'Findings about GPU processes and service ports by code (memory held by no configured service, a second or stale listener).',
  gpu_console_gpu_ecc_errors_total: 'ECC errors of the GPU (nvidia-smi): kind corrected or uncorrected, scope volatile (since the driver loaded) or aggregate (the board\'s life).',
  gpu_console_gpu_retired_pages: 'GPU memory pages retired (pre-Ampere) or rows remapped (Ampere and later); AMD: bad VRAM pages.',
  gpu_console_gpu_retired_pages_pending: 'Whether a page retirement or row remap waits for a GPU reset or reboot (1) or not (0).',
  gpu_console_gpu_throttle_active: 'Whether a clock event (throttle) reason is active on the GPU (1) or not (0), by nvidia-smi\'s reason name; AMD: thermal.',
  gpu_console_gpu_temperature_critical_celsius: 'Critical temperature the driver reports for the GPU (AMD hwmon).',
  gpu_console_gpu_ras_errors_total: 'AMD RAS error counts of the GPU (sum over its blocks), kind corrected or uncorrected.',
  gpu_console_gpu_xid_events: 'NVIDIA Xid events the console holds from the host\'s kernel log for the GPU (the newest 32 per host); absent while the kernel log cannot be read.',
  gpu_console_service_up: 'Whether the model service answers its health check (1) or not (0, also while it loads its model); absent while unknown.',
  gpu_console_service_health: 'Health of the model service (one series per state; the current one is 1): ok, loading (answers that it loads its model), down, unknown.',
  gpu_console_service_figures_stale: 'Whether the last scrape of the service failed (1); its figures are then left out.',
  gpu_console_service_sleep_state: 'Sleep state of the model service (one series per state; the current one is 1).',
  gpu_console_service_requests_running: 'Requests the server is running now.',
  gpu_console_service_requests_waiting: 'Requests waiting in the server queue.',
  gpu_console_service_kv_cache_usage_ratio: 'KV-cache usage (0..1); llama-server: estimated from /slots.',
  gpu_console_service_generation_tokens_per_second: 'Generated tokens per second over the last poll interval.',
  gpu_console_service_prompt_tokens_per_second: 'Prompt tokens processed per second over the last poll interval.',
  gpu_console_tunnel_state: 'State of the SSH tunnel to the service (one series per state; the current one is 1).',
  gpu_console_tunnel_probe_latency_seconds: 'Latency of the last end-to-end probe through the tunnel (GET /v1/models).',
  gpu_console_tunnel_probe_success: 'Whether the last end-to-end probe through the tunnel passed (1) or failed (0).',
} as const;

type FamilyName = keyof typeof FAMILIES;
/** Counts that only grow (or reset with the driver / a reboot), as Prometheus's counter type means. */
const COUNTERS: ReadonlySet<FamilyName> = new Set(['gpu_console_gpu_ecc_errors_total', 'gpu_console_gpu_ras_errors_total']);
type Labels = Record<string, string | null | undefined>;

/** A label value as the text format writes it: backslash, double quote and newline escaped. */
export function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function escapeHelp(text: string): string {
  return text.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

/** Labels with a value; an unknown (null or empty) label is left out, as Prometheus reads "" as absent. */
function renderLabels(labels: Labels): string {
  const parts = Object.entries(labels)
    .filter((e): e is [string, string] => typeof e[1] === 'string' && e[1] !== '')
    .map(([k, v]) => `${k}="${escapeLabelValue(v)}"`);
  return parts.length === 0 ? '' : `{${parts.join(',')}}`;
}

/** Samples grouped by family (the text format wants a family's lines together). */
class Exposition {
  private readonly samples = new Map<FamilyName, string[]>();

  constructor() {
    for (const name of Object.keys(FAMILIES) as FamilyName[]) this.samples.set(name, []);
  }

  /** Adds a sample when the value is a finite number; an unknown figure is left out. */
  add(name: FamilyName, labels: Labels, value: number | null | undefined): void {
    if (typeof value === 'number' && Number.isFinite(value)) this.samples.get(name)!.push(`${name}${renderLabels(labels)} ${value}`);
  }

  render(): string {
    const lines: string[] = [];
    for (const [name, samples] of this.samples) lines.push(`# HELP ${name} ${escapeHelp(FAMILIES[name])}`, `# TYPE ${name} ${COUNTERS.has(name) ? 'counter' : 'gauge'}`, ...samples);
    return lines.join('\n') + '\n';
  }
}

const bytes = (mib: number | null | undefined): number | null => (typeof mib === 'number' ? mib * MIB : null);
/** Processes per GPU on /metrics: the largest ones; a PID label is a new series per process, so the count is capped. */
export const PROCESSES_PER_GPU = 8;

function addHealth(out: Exposition, h: HostView): void {
  const hv = h.health;
  if (!hv) return;
  const host = { host: h.label };
  out.add('gpu_console_host_health_stale', host, hv.staleReason !== null ? 1 : hv.atMs !== null ? 0 : null);
  if (hv.staleReason === null) {
    for (const d of hv.disks) {
      const labels = { host: h.label, kind: d.kind, path: d.path, mount: d.mount };
      out.add('gpu_console_host_disk_free_bytes', labels, d.freeBytes);
      out.add('gpu_console_host_disk_total_bytes', labels, d.totalBytes);
      out.add('gpu_console_host_disk_low', labels, d.margin === 'low' ? 1 : d.margin === 'ok' ? 0 : null);
    }
    out.add('gpu_console_host_memory_available_bytes', host, hv.memAvailableBytes);
    out.add('gpu_console_host_memory_total_bytes', host, hv.memTotalBytes);
    out.add('gpu_console_host_swap_used_bytes', host, hv.swapTotalBytes !== null && hv.swapFreeBytes !== null ? hv.swapTotalBytes - hv.swapFreeBytes : null);
    out.add('gpu_console_host_load1', host, hv.load1);
    out.add('gpu_console_host_cpus', host, hv.cpuCount);
    out.add('gpu_console_host_uptime_seconds', host, hv.uptimeS);
  }
  for (const c of hv.cacheSizes) out.add('gpu_console_host_model_cache_bytes', { host: h.label, path: c.path }, c.bytes);
}

function addGpuProcesses(out: Exposition, h: HostView): void {
  if (!h.gpuProcesses) return;
  for (const g of h.gpus) {
    // GpuView.processes come largest first.
    for (const p of (g.processes ?? []).slice(0, PROCESSES_PER_GPU)) {
      const labels = { host: h.label, gpu: String(g.index), pid: p.pid === null ? null : String(p.pid), process: p.name, service: p.serviceId };
      out.add('gpu_console_gpu_process_memory_bytes', labels, bytes(p.usedMemoryMiB));
    }
  }
  const byCode = new Map<string, number>();
  for (const f of h.gpuProcesses.flags) byCode.set(f.code, (byCode.get(f.code) ?? 0) + 1);
  for (const [code, n] of byCode) out.add('gpu_console_host_gpu_process_flags', { host: h.label, code }, n);
}
const ratio = (pct: number | null | undefined): number | null => (typeof pct === 'number' ? pct / 100 : null);
const flag = (b: boolean | null | undefined): number | null => (typeof b === 'boolean' ? (b ? 1 : 0) : null);
const NVIDIA_REASONS = ['gpu_idle', 'applications_clocks_setting', 'sw_power_cap', 'hw_slowdown', 'hw_thermal_slowdown', 'hw_power_brake_slowdown', 'sw_thermal_slowdown', 'sync_boost'];

/** ECC, retired pages, throttle reasons, AMD RAS and Xid counts; a figure unknown (or a stale health round) is absent. */
function addFaults(out: Exposition, h: HostView): void {
  const hv = h.health;
  if (!hv || hv.staleReason !== null || hv.faultsAtMs == null) return;
  for (const g of h.gpus) {
    const f = g.faults;
    const gpu = { host: h.label, gpu: String(g.index) };
    if (f) {
      for (const [kind, scope, v] of [['corrected', 'volatile', f.eccCorrectedVolatile], ['uncorrected', 'volatile', f.eccUncorrectedVolatile], ['corrected', 'aggregate', f.eccCorrectedAggregate], ['uncorrected', 'aggregate', f.eccUncorrectedAggregate]] as const) {
        out.add('gpu_console_gpu_ecc_errors_total', { ...gpu, kind, scope }, v);
      }
      out.add('gpu_console_gpu_retired_pages', gpu, f.retiredPages);
      out.add('gpu_console_gpu_retired_pages_pending', gpu, flag(f.retiredPagesPending));
      const reasons = (g.vendor ?? h.gpuVendor) === 'amd' ? ['thermal'] : NVIDIA_REASONS;
      if (f.throttleReasons !== null) for (const reason of reasons) out.add('gpu_console_gpu_throttle_active', { ...gpu, reason }, f.throttleReasons.includes(reason) ? 1 : 0);
      out.add('gpu_console_gpu_temperature_critical_celsius', gpu, f.temperatureCriticalC);
      out.add('gpu_console_gpu_ras_errors_total', { ...gpu, kind: 'uncorrected' }, f.rasUncorrected);
      out.add('gpu_console_gpu_ras_errors_total', { ...gpu, kind: 'corrected' }, f.rasCorrected);
    }
    if (hv.kernelLog?.source != null && (g.vendor ?? h.gpuVendor) !== 'amd') out.add('gpu_console_gpu_xid_events', gpu, hv.kernelLog.xids.filter((x) => x.gpuIndex === g.index).length);
  }
}

function addHost(out: Exposition, h: HostView): void {
  out.add('gpu_console_host_connected', { host: h.label }, h.state === 'connected' ? 1 : 0);
  // Before the first GPU reading there is nothing to call stale or fresh.
  out.add('gpu_console_host_gpu_figures_stale', { host: h.label }, h.gpuStale ? 1 : h.gpus.length > 0 ? 0 : null);
  if (h.gpuStale) return;
  for (const g of h.gpus) {
    const labels = { host: h.label, gpu: String(g.index), vendor: g.vendor ?? h.gpuVendor ?? null, name: g.name };
    out.add(FLEET_GPU_SERIES.memoryUsedBytes, labels, bytes(g.memoryUsedMiB));
    out.add(FLEET_GPU_SERIES.memoryTotalBytes, labels, bytes(g.memoryTotalMiB));
    out.add(FLEET_GPU_SERIES.gttUsedBytes, labels, bytes(g.gttUsedMiB));
    out.add(FLEET_GPU_SERIES.gttTotalBytes, labels, bytes(g.gttTotalMiB));
    out.add(FLEET_GPU_SERIES.utilizationRatio, labels, ratio(g.utilizationPct));
    out.add(FLEET_GPU_SERIES.powerWatts, labels, g.powerW);
    out.add(FLEET_GPU_SERIES.powerLimitWatts, labels, g.powerLimitW);
    out.add(FLEET_GPU_SERIES.temperatureCelsius, labels, g.temperatureC);
  }
}

function addService(out: Exposition, h: HostView, s: ServiceView): void {
  const id = { host: h.label, service: s.id };
  out.add('gpu_console_service_up', { ...id, kind: s.kind, model: s.model }, s.health === 'ok' ? 1 : s.health === 'unknown' ? null : 0);
  for (const state of HEALTH_STATES) out.add('gpu_console_service_health', { ...id, state }, s.health === state ? 1 : 0);
  out.add('gpu_console_service_figures_stale', id, s.stale ? 1 : 0);
  for (const state of SLEEP_STATES) out.add('gpu_console_service_sleep_state', { ...id, state }, s.sleep === state ? 1 : 0);
  if (!s.stale) {
    out.add('gpu_console_service_requests_running', id, s.requestsRunning);
    out.add('gpu_console_service_requests_waiting', id, s.requestsWaiting);
    out.add('gpu_console_service_kv_cache_usage_ratio', id, ratio(s.kvCachePct));
    out.add('gpu_console_service_generation_tokens_per_second', id, s.generationTokensPerS);
    out.add('gpu_console_service_prompt_tokens_per_second', id, s.promptTokensPerS);
  }
  for (const state of TUNNEL_STATES) out.add('gpu_console_tunnel_state', { ...id, state }, s.tunnel.state === state ? 1 : 0);
  const probe = s.tunnel.lastProbe;
  out.add('gpu_console_tunnel_probe_latency_seconds', id, probe ? probe.latencyMs / 1000 : null);
  out.add('gpu_console_tunnel_probe_success', id, probe ? (probe.ok ? 1 : 0) : null);
}

/** The fleet snapshot as Prometheus text; a family with no known figure keeps its HELP and TYPE. */
export function renderFleetExposition(snapshot: FleetSnapshot): string {
  const out = new Exposition();
  for (const h of snapshot.hosts) {
    addHost(out, h);
    addHealth(out, h);
    addGpuProcesses(out, h);
    addFaults(out, h);
    for (const s of h.services) addService(out, h, s);
  }
  return out.render();
}
