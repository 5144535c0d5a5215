import { z } from 'zod';
import { LogsErrorCode } from './codes.js';
import { ContractErrorSchema } from './errors.js';
import { HostLabelSchema, ServiceIdSchema } from './primitives.js';

// The logs of a service, over SSH (journalctl, docker compose logs, docker
// logs, tail -F, or the operator's command). A tail is one call; a follow is
// a call that returns an id, then `logs.batch` events for that id (at most a
// few a second, each a bounded batch) until `logs.ended`. A follow lives
// while someone renews it: a window or tab that went away without
// unfollowing stops costing an SSH channel within one lease.

/** Known failure lines the view marks (and alerts quote). */
export const LogFailureKindSchema = z.enum([
  'cuda-oom',
  'kv-cache',
  'nccl-error',
  'xid',
  'engine-dead',
  'model-load-failed',
  'request-error',
  'port-in-use',
  'download-failed',
  'disk-full',
  'context-length',
  'traceback',
]);
export type LogFailureKind = z.infer<typeof LogFailureKindSchema>;

export const LogLineSchema = z
  .object({
    type: z.literal('line'),
    /** Epoch ms the source stamped the line with; null when the source has no timestamps (a file, a command). Never the time it arrived. */
    ts: z.number().nullable(),
    /** Masked (secrets written inline, the service's keys) before it left main; colour codes dropped. */
    text: z.string(),
    stream: z.enum(['stdout', 'stderr']),
    failure: LogFailureKindSchema.nullable(),
    /** Bytes of an over-long line that were cut (0: the whole line). */
    cutBytes: z.number().int().nonnegative(),
    /** The line was binary garbage; its text says so instead of showing it. */
    binary: z.boolean(),
  })
  .strict();
export type LogLine = z.infer<typeof LogLineSchema>;

export const LogMarkerKindSchema = z.enum([
  /** `count` lines were dropped here because this follower could not keep up. */
  'dropped',
  /** The follow could not resume from its last line: lines of `count` seconds may be missing. */
  'gap',
  /** The link went; the follow waits for it. */
  'link-lost',
  /** Picked up again after a link drop or a source restart, from the last line (nothing repeated or skipped). */
  'resumed',
  /** The log command ended (a container stopped); the follow waits for the source to come back. */
  'source-ended',
  'file-rotated',
  'file-truncated',
  'file-missing',
  /** Said by the reader, not main: `count` entries of this follow never reached it (the event stream was backed up and skipped them). */
  'stream-lost',
]);
export type LogMarkerKind = z.infer<typeof LogMarkerKindSchema>;

export const LogMarkerSchema = z
  .object({
    type: z.literal('marker'),
    marker: LogMarkerKindSchema,
    text: z.string(),
    /** A LOGS_* code where the marker reports a loss (LOGS_LINES_DROPPED, LOGS_GAP, LOGS_LINK_LOST). */
    code: z.string().nullable(),
    /** Lines dropped, or seconds of a gap; null for the others. */
    count: z.number().int().nonnegative().nullable(),
    /** Epoch ms the console noted it. */
    at: z.number(),
  })
  .strict();
export type LogMarker = z.infer<typeof LogMarkerSchema>;

export const LogEntrySchema = z.discriminatedUnion('type', [LogLineSchema, LogMarkerSchema]);
export type LogEntry = z.infer<typeof LogEntrySchema>;

export const LogFilterSchema = z
  .object({
    /** Plain text (a substring), or a JavaScript regular expression with `regex: true`. */
    pattern: z.string().min(1).max(500),
    regex: z.boolean().default(false),
    ignoreCase: z.boolean().default(true),
  })
  .strict();
export type LogFilter = z.infer<typeof LogFilterSchema>;

export const LogSourceViewSchema = z
  .object({
    kind: z.enum(['journal', 'compose', 'docker', 'file', 'command']),
    /** In words: "journal of llama-server.service", "file /var/log/vllm.log". */
    description: z.string(),
    /** Whether lines carry the source's timestamps (so `since` works and a follow resumes without a gap). */
    timestamps: z.boolean(),
  })
  .strict();
export type LogSourceView = z.infer<typeof LogSourceViewSchema>;

const ServiceRef = { label: HostLabelSchema, serviceId: ServiceIdSchema };

export const LogsTailInputSchema = z
  .object({
    ...ServiceRef,
    lines: z.number().int().min(1).max(5000).default(200),
    /** Epoch ms: lines from then on (sources with timestamps only). */
    sinceMs: z.number().int().nonnegative().optional(),
    filter: LogFilterSchema.optional(),
  })
  .strict();

export const LogsTailResultSchema = z
  .object({
    source: LogSourceViewSchema,
    entries: z.array(LogEntrySchema),
    /** Lines the source gave before the filter (the filter applies to the last `lines` of them). */
    scanned: z.number().int().nonnegative(),
  })
  .strict();
export type LogsTailResult = z.infer<typeof LogsTailResultSchema>;

export const LogsFollowInputSchema = z
  .object({
    ...ServiceRef,
    /** Lines before now to start with. */
    lines: z.number().int().min(0).max(1000).default(100),
    sinceMs: z.number().int().nonnegative().optional(),
    filter: LogFilterSchema.optional(),
  })
  .strict();

export const LogsFollowResultSchema = z
  .object({
    followId: z.string(),
    source: LogSourceViewSchema,
    /** Renew (logs.renew) within this, or the follow ends. */
    leaseMs: z.number().int().positive(),
  })
  .strict();

export const logsInvokeChannels = {
  'logs.tail': { input: LogsTailInputSchema, output: LogsTailResultSchema },
  'logs.follow': { input: LogsFollowInputSchema, output: LogsFollowResultSchema },
  'logs.renew': {
    input: z.object({ followIds: z.array(z.string().max(100)).max(64) }).strict(),
    output: z.object({ renewed: z.array(z.string()), unknown: z.array(z.string()) }).strict(),
  },
  'logs.unfollow': {
    input: z.object({ followId: z.string().max(100) }).strict(),
    output: z.object({ followId: z.string(), ended: z.boolean() }).strict(),
  },
} as const;

export const LogsBatchSchema = z
  .object({
    followId: z.string(),
    /** In order; markers where something happened between lines. Bounded per event. */
    entries: z.array(LogEntrySchema),
    /** Entries still queued for this follower after this batch (the view is behind by this much). */
    queued: z.number().int().nonnegative(),
    /**
     * The index of `entries[0]` in this follow's own sequence (0, 1, 2… over all its batches): a reader
     * that expected less missed batches (a backed-up event stream skips them), one that expected more
     * was sent a repeat.
     */
    firstIndex: z.number().int().nonnegative(),
  })
  .strict();
export type LogsBatch = z.infer<typeof LogsBatchSchema>;

export const LogsEndedSchema = z
  .object({
    followId: z.string(),
    /** Why it ended: null when unfollowed or its lease ran out; a coded error otherwise (LOGS_NOT_PERMITTED, LOGS_SOURCE_MISSING…). */
    error: ContractErrorSchema.nullable(),
    /** Entries this follow sent in all (the index its next batch would have had): missed last batches are counted too. */
    endIndex: z.number().int().nonnegative(),
  })
  .strict();
export type LogsEnded = z.infer<typeof LogsEndedSchema>;

/** What a reader takes from a batch, given the index it expects next (0 for a new follow). */
export interface SequencedBatch {
  /** The entries not seen before (a repeat's already-seen ones left out). */
  fresh: readonly LogEntry[];
  /** Entries sent between the last one seen and this batch that never arrived. */
  lost: number;
  /** The index to expect next. */
  nextIndex: number;
}

/** Places a batch in its follow's sequence: what was lost before it, what of it is new. */
export function sequenceBatch(expectedIndex: number, batch: Pick<LogsBatch, 'firstIndex' | 'entries'>): SequencedBatch {
  const lost = Math.max(0, batch.firstIndex - expectedIndex);
  const seen = Math.max(0, expectedIndex - batch.firstIndex);
  const fresh = seen === 0 ? batch.entries : batch.entries.slice(seen);
  return { fresh, lost, nextIndex: Math.max(expectedIndex, batch.firstIndex + batch.entries.length) };
}

/** The marker a reader puts where `count` entries of a follow never reached it; `stream` names the stream in the reader's words. */
export function streamLostMarker(count: number, at: number, stream: string): LogMarker {
  return { type: 'marker', marker: 'stream-lost', text: `${count} ${count === 1 ? 'line' : 'lines'} lost: ${stream} was backed up`, code: LogsErrorCode.STREAM_BACKED_UP, count, at };
}

export const logsEventChannels = {
  'logs.batch': LogsBatchSchema,
  'logs.ended': LogsEndedSchema,
} as const;
