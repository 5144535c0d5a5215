import { z } from 'zod';
import { GpuFaultsViewSchema, GpuProcessViewSchema, HostGpuProcessesViewSchema, HostHealthViewSchema } from './fleet.js';
import { LogLineSchema, LogSourceViewSchema } from './logs.js';

// The evidence's parts on hosts' health at export and on service logs around
// lifecycle actions (gpu-console.evidence/3, issue #29 item 7), apart from
// report.ts to keep each file readable. They reuse the fleet's and the logs'
// contract views so the report says exactly what the screen says.

/**
 * A host's health as the fleet held it when the report was built: the same
 * views the console shows (one function), each part with its own reading time
 * (`health.atMs`, `gpuProcesses.atMs`, a GPU's `faults.atMs`). Null parts were
 * not read: host health polling off, or no reading yet.
 */
export const EvidenceHostStateSchema = z
  .object({
    host: z.string(),
    /** The SSH session's state when the report was built. */
    connection: z.string(),
    health: HostHealthViewSchema.nullable(),
    gpus: z.array(
      z
        .object({
          index: z.number().int(),
          name: z.string(),
          processes: z.array(GpuProcessViewSchema).nullable(),
          faults: GpuFaultsViewSchema.nullable(),
        })
        .strict(),
    ),
    gpuProcesses: HostGpuProcessesViewSchema.nullable(),
  })
  .strict();
export type EvidenceHostState = z.infer<typeof EvidenceHostStateSchema>;

/** Log lines of a service around one lifecycle action (only when the operator asked for them). */
export const EvidenceLogExcerptSchema = z
  .object({
    actionId: z.string(),
    kind: z.string(),
    host: z.string(),
    serviceId: z.string(),
    /** The lines' window: a little before the action started to a little after it ended. */
    fromMs: z.number(),
    toMs: z.number(),
    source: LogSourceViewSchema.nullable(),
    /** Masked as every log line is; at most 200 per action. */
    lines: z.array(LogLineSchema).max(200),
    /** Lines in the window left out by the bound (the earliest are kept: they show how it began). */
    omitted: z.number().int().nonnegative(),
    /** Why there are no lines (`LOGS_SINCE_UNSUPPORTED: …`, host down); null when read. */
    problem: z.string().nullable(),
  })
  .strict();
export type EvidenceLogExcerpt = z.infer<typeof EvidenceLogExcerptSchema>;
