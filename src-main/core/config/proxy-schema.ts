// The proxy's part of the config: ports, per-class hold budgets and queue
// bounds, timeouts, the request log, anonymous loopback clients, per-upstream
// slots, caps, API key references and weights, and group aliases. Strict like
// the rest: an unknown key is an error.
import { z } from 'zod';
import { intRange, ListenPortSchema } from './number-fields.js';
import { ClientsConfigSchema } from './clients-schema.js';
import { CaptureConfigSchema } from './capture-schema.js';
import { ModelsConfigSchema } from './models-schema.js';

const TRAFFIC_CLASS = z.enum(['interactive', 'system', 'batch'], { error: 'must be one of: interactive, system, batch' });
const UPSTREAM_KEY = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}\/[A-Za-z0-9][A-Za-z0-9_-]{0,62}$/;

/** Per-class figures; a class left out keeps its default. */
const perClass = (defaults: { interactive: number; system: number; batch: number }, min: number, max: number) =>
  z
    .object({
      interactive: intRange(min, max).default(defaults.interactive),
      system: intRange(min, max).default(defaults.system),
      batch: intRange(min, max).default(defaults.batch),
    })
    .strict()
    .prefault({});

export const ProxyUpstreamConfigSchema = z
  .object({
    /** Concurrent requests sent to this upstream; default: the service's `slots`. */
    slots: intRange(1, 1024).optional(),
    /** Slots only interactive requests may use. */
    reservedInteractive: intRange(0, 1024).optional(),
    caps: z
      .object({ interactive: intRange(0, 1024).optional(), system: intRange(0, 1024).optional(), batch: intRange(0, 1024).optional() })
      .strict()
      .optional(),
    /** Name of the upstream's API key in the secret store; the key itself never appears in config. */
    apiKeyRef: z
      .string()
      .trim()
      .min(1, { error: 'apiKeyRef must not be empty' })
      .max(200)
      // notify.* names belong to notification channels: naming one here would send a channel's secret
      // as Bearer to a model server (a secret reaches only its own destination).
      .refine((ref) => !/^notify\./i.test(ref), { error: "apiKeyRef must not name a notification channel's secret (notify.*)" })
      .optional(),
    /** Share of its model's traffic against the model's other replicas (e.g. 55 / 30 / 15); default 1. */
    weight: z
      .number({ error: 'weight must be a number' })
      .refine((w) => Number.isFinite(w) && w > 0, { error: 'weight must be a positive number' })
      .refine((w) => w <= 1_000_000, { error: 'weight must be at most 1000000' })
      .optional(),
  })
  .strict();

/** A group alias: a name clients request, served by the first of its models that can take the request. */
const GROUP_NAME = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$/;

export const ProxyConfigSchema = z
  .object({
    port: ListenPortSchema.default(0),
    /** Longest a request may wait for a slot, per class (ms). */
    holdBudgetMs: perClass({ interactive: 45_000, system: 10_000, batch: 1_800_000 }, 0, 3_600_000),
    /** Most requests waiting per upstream and class; past it: 429 queue_full. */
    queueBound: perClass({ interactive: 256, system: 64, batch: 4096 }, 0, 100_000),
    /** A waiting streaming request gets an SSE keep-alive comment this often (the first after this long). */
    keepAliveIntervalMs: intRange(100, 60_000).default(2_000),
    maxBodyBytes: intRange(1024, 64 * 1024 * 1024).default(8 * 1024 * 1024),
    /** A client must finish sending its body within this time. */
    bodyTimeoutMs: intRange(100, 600_000).default(15_000),
    /** Upstream: until the response starts (a non-streaming answer starts when it is complete). */
    upstreamHeadersTimeoutMs: intRange(1_000, 3_600_000).default(600_000),
    /** Upstream: longest silence between two chunks of a response. */
    upstreamIdleTimeoutMs: intRange(1_000, 3_600_000).default(300_000),
    idempotencyTtlMs: intRange(1_000, 86_400_000).default(600_000),
    /** At shutdown, in-flight requests get this long to finish before they are cut. */
    shutdownGraceMs: intRange(0, 60_000).default(5_000),
    /**
     * The request log (one row per request of a client with a valid token; refused ones are only counted):
     * rows older than `retentionDays`, or past the newest `maxRows`, are deleted in the background. While the
     * data folder refuses writes (full disk), up to `backlogRows` rows wait in memory; older ones are dropped and counted.
     */
    requestLog: z
      .object({
        retentionDays: intRange(1, 3650).default(30),
        maxRows: intRange(1_000, 100_000_000).default(1_000_000),
        backlogRows: intRange(0, 1_000_000).default(10_000),
      })
      .strict()
      .prefault({}),
    /** Bodies of failed (or sampled) requests, opt-in (capture-schema.ts). */
    capture: CaptureConfigSchema,
    /** Per served model (name or alias): max_tokens default and ceiling, upstream timeouts (models-schema.ts). */
    models: ModelsConfigSchema,
    /** Lets clients without a token in (they are on loopback) at one class. Off by default. */
    anonymousLoopback: z
      .object({ enabled: z.boolean().default(false), class: TRAFFIC_CLASS.default('batch') })
      .strict()
      .prefault({}),
    /** Per upstream (`label/serviceId`): slots, caps and the API key reference. */
    upstreams: z
      .record(z.string().regex(UPSTREAM_KEY, { error: 'upstream keys look like label/serviceId' }), ProxyUpstreamConfigSchema)
      .default({}),
    /**
     * Group aliases: name → models (or other groups) in fallback order. A request for the group goes to the
     * first model's replicas; the next model is used only when the request failed before the first byte.
     */
    groups: z
      .record(
        z.string().regex(GROUP_NAME, { error: 'group names start with a letter or digit and use letters, digits, ".", "_", ":", "/" and "-"' }),
        z.array(z.string().trim().min(1, { error: 'a group member must not be empty' })).min(1, { error: 'a group needs at least one model' }).max(32),
      )
      .default({}),
    /** Per-token limits (clients-schema.ts): allowed models, rpm, tpm, monthly budget, expiry; config wins over the UI. */
    clients: ClientsConfigSchema,
  })
  .strict();
