import { z } from 'zod';

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
  })
  .strict();
export type GpuView = z.infer<typeof GpuViewSchema>;

export const SleepStateSchema = z.enum(['awake', 'asleep-1', 'asleep-2', 'unknown']);
export type SleepState = z.infer<typeof SleepStateSchema>;

export const ServiceViewSchema = z
  .object({
    id: z.string(),
    kind: z.enum(['vllm', 'llama-server']),
    model: z.string(),
    aliases: z.array(z.string()),
    slots: z.number().int(),
    remotePort: z.number().int(),
    tunnel: z
      .object({
        state: TunnelStateSchema,
        localUrl: z.string().nullable(),
        lastError: ErrorSummarySchema.nullable(),
      })
      .strict(),
    health: z.enum(['ok', 'down', 'unknown']),
    sleep: SleepStateSchema,
    requestsRunning: z.number().nullable(),
    requestsWaiting: z.number().nullable(),
    kvCachePct: z.number().nullable(),
    generationTokensPerS: z.number().nullable(),
    promptTokensPerS: z.number().nullable(),
    /** True when the last scrape failed; the figures above are then the last good ones. */
    stale: z.boolean(),
    staleReason: z.string().nullable(),
  })
  .strict();
export type ServiceView = z.infer<typeof ServiceViewSchema>;

export const HostViewSchema = z
  .object({
    label: z.string(),
    address: z.string(),
    state: HostConnectionStateSchema,
    lastError: ErrorSummarySchema.nullable(),
    nextRetryAt: z.number().nullable(),
    /** SHA256 fingerprint of the host key when known (shown for trust decisions). */
    hostKeyFingerprint: z.string().nullable(),
    gpuModel: z.string().nullable(),
    pricePerHourUsd: z.number().nullable(),
    gpus: z.array(GpuViewSchema),
    gpuStale: z.boolean(),
    gpuStaleReason: z.string().nullable(),
    services: z.array(ServiceViewSchema),
    updatedAt: z.number().nullable(),
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
