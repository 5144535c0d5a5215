// `proxy.capture`: which requests the proxy keeps the bodies of (opt-in, off by
// default), how much of each body, and how long. A cap of zero or below is an
// error naming the field: a capture that stores nothing would look like one
// that works.
import { z } from 'zod';
import { intRange } from './number-fields.js';

const NAME = z.string().trim().min(1, { error: 'must not be empty' }).max(200);

export const CaptureRetentionSchema = z
  .object({
    /** Captures older than this are deleted. */
    days: intRange(1, 365).default(7),
    /** At most this many captures are kept (the oldest go first). */
    rows: intRange(1, 1_000_000).default(10_000),
    /** At most this many stored body bytes (requests and answers together; the oldest go first). */
    bytes: intRange(1024, 64 * 1024 * 1024 * 1024).default(256 * 1024 * 1024),
  })
  .strict()
  .prefault({});

export const CaptureConfigSchema = z
  .object({
    enabled: z.boolean().default(false),
    /** Capture requests that failed: status ≥ 400, a cut stream, an error event inside a 200 stream, a 200 that is not JSON or SSE. */
    failures: z.boolean().default(true),
    /** Also capture this share of all requests (0 = none, 1 = every one). */
    sampleRate: z
      .number({ error: 'must be a number between 0 and 1' })
      .min(0, { error: 'must be between 0 and 1' })
      .max(1, { error: 'must be between 0 and 1' })
      .default(0),
    /** Only requests for these models (names, aliases or groups as clients send them); empty: every model. */
    models: z.array(NAME).max(256).default([]),
    /** Only requests of these client tokens (by name); empty: every token. */
    tokens: z.array(NAME).max(256).default([]),
    /** Bytes kept of each body (the request's and the answer's); the full size is recorded beside. */
    maxBodyBytes: intRange(1, 16 * 1024 * 1024).default(64 * 1024),
    retention: CaptureRetentionSchema,
  })
  .strict()
  .prefault({});

export type CaptureConfig = z.infer<typeof CaptureConfigSchema>;
