import { z } from 'zod';

// Captured requests (config `proxy.capture`, opt-in): the bodies of failed (or
// sampled) requests, capped and redacted, kept with their own retention. Lists
// carry sizes only; a body leaves the core through `proxy.showCapture` or
// `proxy.exportCaptures`, each an audit event.

/**
 * How a body was kept: `utf8` text; `compressed` (a Content-Encoding such as gzip: size only);
 * `binary` (a binary content type or NUL bytes: size only); `not_utf8` (size only); `empty`.
 */
export const CaptureEncodingSchema = z.enum(['utf8', 'compressed', 'binary', 'not_utf8', 'empty']);
export type CaptureEncoding = z.infer<typeof CaptureEncodingSchema>;

export const CaptureBodyMetaSchema = z
  .object({
    /** The body's whole size as it passed (bytes); more than storedBytes when truncated. */
    sizeBytes: z.number().int().nonnegative(),
    /** Bytes kept (at most the configured maxBodyBytes). */
    storedBytes: z.number().int().nonnegative(),
    truncated: z.boolean(),
    encoding: CaptureEncodingSchema,
    contentType: z.string().nullable(),
    /** The Content-Encoding it came with (gzip, br…), null when none. */
    contentEncoding: z.string().nullable(),
  })
  .strict();
export type CaptureBodyMeta = z.infer<typeof CaptureBodyMetaSchema>;

export const CaptureBodySchema = CaptureBodyMetaSchema.extend({
  /** The kept bytes as text with secrets redacted; null for compressed, binary, not-UTF-8 or empty bodies. */
  text: z.string().nullable(),
  /** Headers as they came, with credentials replaced by "[redacted]". */
  headers: z.record(z.string(), z.string()),
}).strict();
export type CaptureBody = z.infer<typeof CaptureBodySchema>;

export const CaptureReasonSchema = z.enum(['failure', 'sample']);

export const CaptureSummarySchema = z
  .object({
    id: z.number().int().positive(),
    ts: z.number(),
    /** The request row's id (x-request-id): the Proxy view links the two. */
    requestId: z.string(),
    /** The trace id the request carried or was given, when the proxy knows one. */
    traceId: z.string().nullable(),
    client: z.string(),
    model: z.string().nullable(),
    upstream: z.string().nullable(),
    endpoint: z.string(),
    status: z.number().int(),
    errorCode: z.string().nullable(),
    reason: CaptureReasonSchema,
    request: CaptureBodyMetaSchema,
    answer: CaptureBodyMetaSchema,
  })
  .strict();
export type CaptureSummary = z.infer<typeof CaptureSummarySchema>;

export const CaptureDetailSchema = CaptureSummarySchema.extend({ request: CaptureBodySchema, answer: CaptureBodySchema }).strict();
export type CaptureDetail = z.infer<typeof CaptureDetailSchema>;

export const CaptureQuerySchema = z
  .object({
    limit: z.number().int().min(1).max(500).default(100),
    /** Older than this capture (paging). */
    beforeId: z.number().int().positive().optional(),
    model: z.string().max(200).optional(),
    client: z.string().max(200).optional(),
    requestId: z.string().max(200).optional(),
    /** At or after this time (ms epoch). */
    sinceTs: z.number().optional(),
  })
  .strict();
export type CaptureQuery = z.infer<typeof CaptureQuerySchema>;

/** Whether capture is on and for what, what is kept, and what was lost while the data folder refused writes. */
export const CaptureStatusSchema = z
  .object({
    enabled: z.boolean(),
    failures: z.boolean(),
    sampleRate: z.number(),
    /** Empty: every model. */
    models: z.array(z.string()),
    /** Empty: every token. */
    tokens: z.array(z.string()),
    maxBodyBytes: z.number().int(),
    retention: z.object({ days: z.number().int(), rows: z.number().int(), bytes: z.number().int() }).strict(),
    rowsKept: z.number().int(),
    bytesKept: z.number().int(),
    oldestTs: z.number().nullable(),
    /** Captures that waited to be written. */
    pending: z.number().int(),
    /** Captures given up since start: the data folder refused writes past the backlog, or the backlog was full. */
    dropped: z.number().int(),
    lastPrunedAt: z.number().nullable(),
  })
  .strict();
export type CaptureStatus = z.infer<typeof CaptureStatusSchema>;

/** Export: these captures (ids), or those the query selects; at most 100 a call (page with beforeId). */
export const CaptureExportInputSchema = z
  .object({
    ids: z.array(z.number().int().positive()).min(1).max(100).optional(),
    query: CaptureQuerySchema.extend({ limit: z.number().int().min(1).max(100).default(100) }).strict().optional(),
  })
  .strict();

export const proxyCapturesInvokeChannels = {
  'proxy.captureStatus': { input: z.object({}).strict(), output: CaptureStatusSchema },
  'proxy.listCaptures': { input: CaptureQuerySchema, output: z.object({ captures: z.array(CaptureSummarySchema) }).strict() },
  /** One capture with its bodies; audited (proxy.capture.viewed). */
  'proxy.showCapture': { input: z.object({ id: z.number().int().positive() }).strict(), output: CaptureDetailSchema },
  /** Captures with their bodies as one JSON document; audited (proxy.capture.exported). */
  'proxy.exportCaptures': {
    input: CaptureExportInputSchema,
    output: z.object({ exportedAt: z.number(), captures: z.array(CaptureDetailSchema) }).strict(),
  },
} as const;
