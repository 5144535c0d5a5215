import { z } from 'zod';
import { ServiceKindSchema } from './service-kind.js';

// What the UI sees of hosts, GPUs and model services. Every figure that may be
// unknown is nullable: the UI shows "—", never a made-up zero.

export const HostConnectionStateSchema = z.enum([
  'disconnected',
  'connecting',
  'awaiting-trust',
  'connected',
  'reconnecting',
  'failed',
]);
export type HostConnectionState = z.infer<typeof HostConnectionStateSchema>;

export const TunnelStateSchema = z.enum(['idle', 'connecting', 'up', 'degraded', 'reconnecting', 'failed', 'closed']);
export type TunnelState = z.infer<typeof TunnelStateSchema>;

export const ErrorSummarySchema = z.object({ code: z.string(), message: z.string(), at: z.number() }).strict();
export type ErrorSummary = z.infer<typeof ErrorSummarySchema>;

const CodedMessageSchema = z.object({ code: z.string(), message: z.string() }).strict();

/** The last end-to-end probe through a tunnel (GET /v1/models); a tunnel is `up` only while the last one passed. */
export const TunnelProbeSchema = z
  .object({ ok: z.boolean(), at: z.number(), latencyMs: z.number(), error: CodedMessageSchema.nullable() })
  .strict();
export type TunnelProbe = z.infer<typeof TunnelProbeSchema>;

export const TunnelTestStepSchema = z
  .object({
    /** `embeddings` instead of `chat` for an embedding server (kind tei), whose model is read from GET /info. */
    name: z.enum(['models', 'chat', 'embeddings']),
    ok: z.boolean(),
    status: z.number().int().nullable(),
    latencyMs: z.number(),
    detail: z.string(),
  })
  .strict();
export type TunnelTestStep = z.infer<typeof TunnelTestStepSchema>;

/** The operator's Test of a tunnel: GET /v1/models, then a 1-token chat. */
export const TunnelTestResultSchema = z
  .object({
    ok: z.boolean(),
    at: z.number(),
    totalMs: z.number(),
    localUrl: z.string().nullable(),
    steps: z.array(TunnelTestStepSchema),
    error: CodedMessageSchema.nullable(),
  })
  .strict();
export type TunnelTestResult = z.infer<typeof TunnelTestResultSchema>;

/** A host key the console will not accept on its own: unknown (operator decides) or changed/revoked (refused). */
export const HostKeyProblemSchema = z
  .object({
    status: z.enum(['unknown', 'changed', 'revoked']),
    /** The hop that presented it: the host itself or its jump host. */
    role: z.enum(['host', 'jump']),
    /** known_hosts name: `host` or `[host]:port`. */
    endpoint: z.string(),
    keyType: z.string(),
    fingerprint: z.string(),
    /** For `changed`: what known_hosts or the console's trust store holds. */
    knownFingerprints: z.array(z.string()),
    knownSource: z.enum(['known_hosts', 'console']).nullable(),
  })
  .strict();
export type HostKeyProblem = z.infer<typeof HostKeyProblemSchema>;

/** The host waits for the operator to type a key's passphrase (kept in main-process memory only). */
export const CredentialPromptSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('passphrase'), keyFile: z.string(), reason: z.enum(['required', 'incorrect']) }).strict(),
  /**
   * The host asks something while ssh waits (keyboard-interactive: a one-time code, a second factor;
   * openssh transport): answered through hosts.passphrase before `expiresAt` (epoch ms).
   */
  z.object({ kind: z.literal('prompt'), text: z.string(), expiresAt: z.number() }).strict(),
]);
export type CredentialPrompt = z.infer<typeof CredentialPromptSchema>;

/**
 * Where a group of figures came from and when it was read: the scraper (or
 * Prometheus) and the time of the reading the figures are from. The UI shows
 * it beside the figures ("llama-server /slots · 2 s ago").
 */
export const FigureSourceKindSchema = z.enum(['vllm', 'llama-server', 'sglang', 'tei', 'openai', 'nvidia-smi', 'amd-smi', 'rocm-smi', 'amd-sysfs', 'prometheus']);
export type FigureSourceKind = z.infer<typeof FigureSourceKindSchema>;
export const FigureSourceSchema = z
  .object({
    kind: FigureSourceKindSchema,
    /** When the figures shown were read (ms epoch); null before the first good reading. */
    atMs: z.number().nullable(),
    /** What was read, e.g. "GET /metrics, /slots, /props" or "prometheus http://127.0.0.1:9090". */
    detail: z.string().nullable(),
  })
  .strict();
export type FigureSource = z.infer<typeof FigureSourceSchema>;

export const GpuVendorSchema = z.enum(['nvidia', 'amd']);
export type GpuVendor = z.infer<typeof GpuVendorSchema>;

/** One process holding memory on a GPU, and the configured service it belongs to (null: none, see `why`). */
export const GpuProcessViewSchema = z
  .object({
    pid: z.number().int().nullable(),
    name: z.string().nullable(),
    /** Its owner as the host's `ps` reads it; null when the process list did not show it. */
    user: z.string().nullable(),
    usedMemoryMiB: z.number().nullable(),
    serviceId: z.string().nullable(),
    /** How it was matched, or why it was not (`it or its parent listens on :8000`). */
    why: z.string(),
  })
  .strict();
export type GpuProcessView = z.infer<typeof GpuProcessViewSchema>;

/** Throttle reasons by name (NVIDIA's clocks_event_reasons field names; AMD: `thermal` from hwmon). */
export const THROTTLE_REASONS = [
  'gpu_idle',
  'applications_clocks_setting',
  'sw_power_cap',
  'hw_slowdown',
  'hw_thermal_slowdown',
  'hw_power_brake_slowdown',
  'sw_thermal_slowdown',
  'sync_boost',
  'thermal',
] as const;
export type ThrottleReason = (typeof THROTTLE_REASONS)[number];

/**
 * Reasons that mean the GPU runs slower than it should because something is
 * wrong (heat, a hardware slowdown, the power brake). Idle, an application
 * clock setting, sync boost and the software power cap are normal under load:
 * shown, never flagged or alerted on. One list for core (the tracker's
 * slowdownSinceMs, the gpu_throttle alert) and the host view.
 */
export const SLOWDOWN_REASONS: readonly ThrottleReason[] = ['hw_slowdown', 'hw_thermal_slowdown', 'hw_power_brake_slowdown', 'sw_thermal_slowdown', 'thermal'];

export function isSlowdownReason(reason: string): boolean {
  return (SLOWDOWN_REASONS as readonly string[]).includes(reason);
}

/** A GPU's fault figures from the host-health round; each null when unknown (HostHealthView.faultIssues says why). */
export const GpuFaultsViewSchema = z
  .object({
    atMs: z.number().nullable(),
    pciBusId: z.string().nullable(),
    eccEnabled: z.boolean().nullable(),
    eccCorrectedVolatile: z.number().nullable(),
    eccUncorrectedVolatile: z.number().nullable(),
    eccCorrectedAggregate: z.number().nullable(),
    eccUncorrectedAggregate: z.number().nullable(),
    /** Retired pages (pre-Ampere) or remapped rows (Ampere+); AMD: bad VRAM pages. */
    retiredPages: z.number().nullable(),
    retiredPagesPending: z.boolean().nullable(),
    /** Active clock-throttle reasons (nvidia-smi clocks_event_reasons names; AMD `thermal`); [] none; null unknown. */
    throttleReasons: z.array(z.string().max(40)).max(16).nullable(),
    /** Since when a slowdown reason (thermal, HW slowdown, power brake) has been active; null when none is. */
    slowdownSinceMs: z.number().nullable(),
    /** AMD hwmon critical temperature (°C). */
    temperatureCriticalC: z.number().nullable(),
    rasUncorrected: z.number().nullable(),
    rasCorrected: z.number().nullable(),
    /** Where the figures come from. */
    source: z.string().max(200),
  })
  .strict();
export type GpuFaultsView = z.infer<typeof GpuFaultsViewSchema>;

/** One `NVRM: Xid` line from the host's kernel log. */
export const XidEventViewSchema = z
  .object({
    atMs: z.number(),
    xid: z.number().int(),
    pciBusId: z.string().nullable(),
    gpuIndex: z.number().int().nullable(),
    pid: z.number().int().nullable(),
    text: z.string().max(500),
  })
  .strict();
export type XidEventView = z.infer<typeof XidEventViewSchema>;

/** How the kernel log is read for Xid events, or why it cannot be and what would allow it. */
export const KernelLogViewSchema = z
  .object({
    source: z.enum(['journalctl', 'dmesg']).nullable(),
    why: z.string().max(400).nullable(),
    xids: z.array(XidEventViewSchema).max(32),
  })
  .strict();
export type KernelLogView = z.infer<typeof KernelLogViewSchema>;

export const GpuViewSchema = z
  .object({
    index: z.number().int(),
    uuid: z.string().nullable(),
    name: z.string(),
    memoryUsedMiB: z.number().nullable(),
    memoryTotalMiB: z.number().nullable(),
    utilizationPct: z.number().nullable(),
    powerW: z.number().nullable(),
    powerLimitW: z.number().nullable(),
    temperatureC: z.number().nullable(),
    vendor: GpuVendorSchema.optional(),
    /** AMD (APUs above all): GTT, system memory the GPU maps, used / total. VRAM is then the BIOS carve-out. */
    gttUsedMiB: z.number().nullable().optional(),
    gttTotalMiB: z.number().nullable().optional(),
    /** Its processes as last read (HostView.gpuProcesses says when); absent before the first process list. */
    processes: z.array(GpuProcessViewSchema).max(64).optional(),
    /** ECC, retired pages, throttle reasons (host-health round); absent before they are read. */
    faults: GpuFaultsViewSchema.optional(),
  })
  .strict();
export type GpuView = z.infer<typeof GpuViewSchema>;

export const ServiceHealthSchema = z.enum(['ok', 'loading', 'down', 'unknown']);
export type ServiceHealth = z.infer<typeof ServiceHealthSchema>;

export const SleepStateSchema = z.enum(['awake', 'asleep-1', 'asleep-2', 'unknown']);
export type SleepState = z.infer<typeof SleepStateSchema>;

/** One data-parallel engine of a vLLM server (the `engine` label). */
export const EngineViewSchema = z
  .object({
    engine: z.string(),
    requestsRunning: z.number().nullable(),
    requestsWaiting: z.number().nullable(),
    kvCachePct: z.number().nullable(),
    generationTokensPerS: z.number().nullable(),
  })
  .strict();
export type EngineView = z.infer<typeof EngineViewSchema>;

/** A model of a llama-server in router mode (`GET /models`). */
export const RouterModelViewSchema = z
  .object({
    id: z.string(),
    status: z.enum(['unloaded', 'loading', 'loaded', 'sleeping', 'downloading', 'failed', 'unknown']),
  })
  .strict();
export type RouterModelView = z.infer<typeof RouterModelViewSchema>;

export const ServiceViewSchema = z
  .object({
    id: z.string(),
    kind: ServiceKindSchema,
    model: z.string(),
    aliases: z.array(z.string()),
    slots: z.number().int(),
    remotePort: z.number().int(),
    tunnel: z
      .object({
        state: TunnelStateSchema,
        localUrl: z.string().nullable(),
        lastError: ErrorSummarySchema.nullable(),
        lastProbe: TunnelProbeSchema.nullable().optional(),
        lastTest: TunnelTestResultSchema.nullable().optional(),
        /** While the host reconnects: when the next SSH attempt is due (the listener stays bound meanwhile). */
        nextRetryAt: z.number().nullable().optional(),
      })
      .strict(),
    /**
     * `loading`: the server answers that it is loading its model (llama-server `/health` 503
     * "Loading model"): not serving yet, and not a failure; its figures are unknown meanwhile.
     * vLLM has no such answer (its port refuses until the engine is ready): it reads `down`.
     */
    health: ServiceHealthSchema,
    /** While `loading`: when the server first answered so, this time (ms epoch). */
    loadingSince: z.number().nullable().optional(),
    sleep: SleepStateSchema,
    requestsRunning: z.number().nullable(),
    requestsWaiting: z.number().nullable(),
    kvCachePct: z.number().nullable(),
    generationTokensPerS: z.number().nullable(),
    promptTokensPerS: z.number().nullable(),
    /** True when the last scrape failed; the figures above are then the last good ones. */
    stale: z.boolean(),
    staleReason: z.string().nullable(),
    /** Where the figures came from and when they were read. */
    source: FigureSourceSchema.nullable().optional(),
    /** The server's own version (vLLM /version, llama-server build_info). */
    version: z.string().nullable().optional(),
    /** KV % is an estimate (llama-server: context tokens in use per slot ÷ n_ctx, from /slots). */
    kvCacheEstimated: z.boolean().optional(),
    /**
     * How sleep happens: `manual` (vLLM sleep endpoints, the console can ask), `automatic`
     * (llama-server --sleep-idle-seconds: it sleeps and wakes by itself), `none` (no sleep).
     */
    sleepControl: z.enum(['manual', 'automatic', 'none']).optional(),
    /** Slots the server reports (llama-server total_slots); compare with `slots` (configured). */
    slotsReported: z.number().int().nullable().optional(),
    /** Data-parallel engines (vLLM `engine` label); per-engine figures below when more than one. */
    engines: z.number().int().nullable().optional(),
    perEngine: z.array(EngineViewSchema).optional(),
    /** Prefix-cache hit rate: over the last window, or since start when the window saw no queries. */
    prefixHitPct: z.number().nullable().optional(),
    prefixHitScope: z.enum(['window', 'cumulative']).nullable().optional(),
    /** Share of prompt tokens served from the prompt cache (vLLM prompt_tokens_cached, llama-server n_prompt_tokens_cache). */
    promptCacheReusePct: z.number().nullable().optional(),
    /** Speculative decoding: accepted ÷ drafted tokens, when drafts exist. */
    specAcceptancePct: z.number().nullable().optional(),
    /** `live`: rates include the progress of running requests (llama-server /slots); `counters`: finished work only. */
    rateBasis: z.enum(['live', 'counters']).nullable().optional(),
    /** llama-server router mode: its models and their state. */
    routerModels: z.array(RouterModelViewSchema).nullable().optional(),
    /** The last reading was partial: why some figures are unknown (`CODE: message` each). */
    issues: z.array(z.string()).max(10).optional(),
  })
  .strict();
export type ServiceView = z.infer<typeof ServiceViewSchema>;

export const SshTransportViewSchema = z
  .object({
    kind: z.enum(['builtin', 'openssh']),
    why: z.string(),
    /** `OpenSSH_9.2p1 …`, or `ssh2` for the builtin transport. */
    client: z.string().nullable(),
    /** Effective settings from `ssh -G` (openssh), keyword → value. */
    effective: z.record(z.string(), z.string()).nullable(),
    /** How remote commands run, in words (a channel each; one remote shell; an `ssh` process each, and why). */
    commands: z.string().max(200).optional(),
  })
  .strict();
export type SshTransportView = z.infer<typeof SshTransportViewSchema>;

/** Something on a GPU or a service's port that no configured service accounts for; the console kills nothing. */
export const ProcessFlagViewSchema = z
  .object({
    /** FLEET_GPU_PROCESS_UNKNOWN, FLEET_PORT_SECOND_LISTENER, FLEET_PORT_STALE_LISTENER. */
    code: z.string(),
    message: z.string(),
    pid: z.number().int().nullable(),
    serviceId: z.string().nullable(),
    gpuIndex: z.number().int().nullable(),
    /** What the operator may run on the host, as text (`kill 4812`); never run by the console. */
    command: z.string().nullable(),
  })
  .strict();
export type ProcessFlagView = z.infer<typeof ProcessFlagViewSchema>;

export const HostGpuProcessesViewSchema = z
  .object({
    /** When the GPU process list was read; the processes are on each GpuView. */
    atMs: z.number().nullable(),
    /** When the process table and listeners they were matched against were read. */
    matchedAtMs: z.number().nullable(),
    flags: z.array(ProcessFlagViewSchema).max(64),
  })
  .strict();
export type HostGpuProcessesView = z.infer<typeof HostGpuProcessesViewSchema>;

/** One filesystem as `df -PB1` read it for a path the console watches. */
export const DiskViewSchema = z
  .object({
    /** `root` (/), `cache` (a model cache folder), `docker` (Docker's root folder). */
    kind: z.enum(['root', 'cache', 'docker']),
    path: z.string(),
    mount: z.string().nullable(),
    totalBytes: z.number().nullable(),
    usedBytes: z.number().nullable(),
    /** Available to an unprivileged user (df's Available). */
    freeBytes: z.number().nullable(),
    /** Why the figures are unknown (`CODE: message`); null when read. */
    error: z.string().nullable(),
    /** Against the host's thresholds (HostHealthView.diskThreshold): low below either; unknown without a free figure. */
    margin: z.enum(['ok', 'low', 'unknown']).optional(),
  })
  .strict();
export type DiskView = z.infer<typeof DiskViewSchema>;

/** A host's health over SSH. Every figure may be unknown (null), never a made-up zero. */
export const HostHealthViewSchema = z
  .object({
    /** When the figures were read; null before the first reading. */
    atMs: z.number().nullable(),
    /** The last round failed (`CODE: message`); the figures are then the last good ones. */
    staleReason: z.string().nullable(),
    /** What was read. */
    source: z.string(),
    intervalMs: z.number(),
    bootId: z.string().nullable(),
    uptimeS: z.number().nullable(),
    /** When the console last saw a new boot id (a reboot); null when it has not. */
    rebootedAtMs: z.number().nullable(),
    load1: z.number().nullable(),
    load5: z.number().nullable(),
    load15: z.number().nullable(),
    cpuCount: z.number().int().nullable(),
    memTotalBytes: z.number().nullable(),
    memAvailableBytes: z.number().nullable(),
    swapTotalBytes: z.number().nullable(),
    swapFreeBytes: z.number().nullable(),
    disks: z.array(DiskViewSchema).max(16),
    /** The model caches' sizes (`du`, every few minutes at low priority) and when measured. */
    cacheSizes: z.array(z.object({ path: z.string(), bytes: z.number().nullable(), error: z.string().nullable() }).strict()).max(8),
    cacheSizesAtMs: z.number().nullable(),
    /** Docker's root folder, or why it is not known. */
    docker: z.object({ rootDir: z.string().nullable(), why: z.string().nullable() }).strict().nullable(),
    issues: z.array(z.string()).max(10),
    /** When a disk counts as low on this host (its `alerts.disk` over the fleet's over 10 GiB or 10 %). */
    diskThreshold: z.object({ freeGiB: z.number(), freePct: z.number() }).strict().optional(),
    /** The kernel log's Xid events and how it is read; absent before the first fault reading. */
    kernelLog: KernelLogViewSchema.nullable().optional(),
    /** When the fault figures were read, and why some are unknown (`CODE: message` each). */
    faultsAtMs: z.number().nullable().optional(),
    faultIssues: z.array(z.string()).max(10).optional(),
  })
  .strict();
export type HostHealthView = z.infer<typeof HostHealthViewSchema>;

/**
 * How the console reads a host's telemetry: `collector` — one command a poll
 * (GPU tool, every service endpoint, host health on every Nth poll); `tunnels` —
 * HTTP through each service's tunnel plus execs, with the reason (`CODE: message`);
 * with `collector`, a reason says why the resident shell is not used (one exec a poll instead);
 * `probing` — not yet known (just connected). A host clock off by more than a
 * minute is reported in seconds (readings keep the console's time).
 */
export const HostReadViewSchema = z
  .object({
    mode: z.enum(['probing', 'collector', 'tunnels']),
    reason: z.string().nullable(),
    clockSkewS: z.number().nullable(),
  })
  .strict();
export type HostReadView = z.infer<typeof HostReadViewSchema>;

export const HostViewSchema = z
  .object({
    label: z.string(),
    address: z.string(),
    state: HostConnectionStateSchema,
    lastError: ErrorSummarySchema.nullable(),
    nextRetryAt: z.number().nullable(),
    /** SHA256 fingerprint of the host key when known (shown for trust decisions). */
    hostKeyFingerprint: z.string().nullable(),
    hostKey: HostKeyProblemSchema.nullable().optional(),
    credentialPrompt: CredentialPromptSchema.nullable().optional(),
    jumpHost: z.string().nullable().optional(),
    /** The SSH transport this host runs on, why, and (openssh) the client and what `ssh -G` says it uses. */
    transport: SshTransportViewSchema.optional(),
    gpuModel: z.string().nullable(),
    pricePerHourUsd: z.number().nullable(),
    gpus: z.array(GpuViewSchema),
    gpuStale: z.boolean(),
    gpuStaleReason: z.string().nullable(),
    /** Detected (or configured) GPU vendor; null before the first reading. */
    gpuVendor: GpuVendorSchema.nullable().optional(),
    /** Where the GPU figures came from and when. */
    gpuSource: FigureSourceSchema.nullable().optional(),
    /** The last GPU reading was partial: why some figures are unknown (`CODE: message` each). */
    gpuIssues: z.array(z.string()).max(10).optional(),
    /** Disk, memory, load, uptime; absent when host health polling is off. */
    health: HostHealthViewSchema.optional(),
    /** When the GPU processes were read and matched, and what has no configured service. */
    gpuProcesses: HostGpuProcessesViewSchema.optional(),
    services: z.array(ServiceViewSchema),
    updatedAt: z.number().nullable(),
    /** Operator-defined tags from the config (`hosts[].tags`): name → value; absent when none. */
    tags: z.record(z.string().max(32), z.string().max(64)).optional(),
    /** How the host is read: one collector command a poll, or through tunnels (and why); absent before the console knew. */
    read: HostReadViewSchema.optional(),
  })
  .strict();
export type HostView = z.infer<typeof HostViewSchema>;

export const FleetSnapshotSchema = z
  .object({
    at: z.number(),
    hosts: z.array(HostViewSchema),
  })
  .strict();
export type FleetSnapshot = z.infer<typeof FleetSnapshotSchema>;
