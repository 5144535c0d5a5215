import { z } from 'zod';
import { HostLabelSchema, ModelNameSchema, ServiceIdSchema } from './primitives.js';

// Contract channels of the bench capability, merged into the channel table in channels.ts.
// Scenarios (saved, reusable load descriptions), runs with per-level figures,
// baselines, comparison, export/import and the evaluation figures of
// field-notes §5 (each with its formula; unavailable rather than 0).

const Id = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/);

/** True for 127.0.0.0/8, [::1] and localhost: the only places the console talks to besides its own tunnels. */
export function isLoopbackHostname(hostname: string): boolean {
  const h = hostname.toLowerCase().replace(/^\[|\]$/g, '');
  return h === 'localhost' || h === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(h);
}

const LoopbackHttpUrl = z.url({ protocol: /^https?$/ }).refine(
  (u) => {
    try {
      return isLoopbackHostname(new URL(u).hostname);
    } catch {
      return false;
    }
  },
  { message: 'must be an http(s) URL on 127.0.0.1, [::1] or localhost: remote models are reached through their SSH tunnel (target kind "tunnel")' },
);

export const BenchTargetSchema = z.discriminatedUnion('kind', [
  /** A model (or alias) through the console's proxy, at a class that never takes interactive slots. */
  z.object({ kind: z.literal('proxy'), model: z.string().min(1).max(200), class: z.enum(['system', 'batch']) }).strict(),
  /** A service's SSH tunnel directly (bypasses the proxy's pools). */
  z.object({ kind: z.literal('tunnel'), host: HostLabelSchema, serviceId: ServiceIdSchema, model: ModelNameSchema.optional() }).strict(),
  /** An OpenAI-compatible base URL on loopback (CLI, standalone; e.g. an `ssh -L` of your own); a bearer token comes from GPU_CONSOLE_TOKEN. */
  z.object({ kind: z.literal('url'), baseUrl: LoopbackHttpUrl, model: z.string().min(1).max(200), class: z.enum(['system', 'batch']).optional() }).strict(),
]);
export type BenchTarget = z.infer<typeof BenchTargetSchema>;

export const PromptSourceSchema = z.discriminatedUnion('kind', [
  /** Built-in prompts of about this many input tokens (one token ≈ one short word). */
  z.object({ kind: z.literal('synthetic'), inputTokens: z.number().int().min(1).max(200_000) }).strict(),
  /** One chat per line: `[{role,content},…]` or `{"messages":[…],"expected":{…}}`. */
  z.object({ kind: z.literal('jsonl'), file: z.string().min(1).max(4096) }).strict(),
  /** The same JSONL carried inline (the renderer reads a chosen file in the browser; it cannot open paths). */
  z.object({ kind: z.literal('inline'), text: z.string().min(1).max(20_000_000), filename: z.string().min(1).max(255).optional() }).strict(),
]);
export type PromptSource = z.infer<typeof PromptSourceSchema>;

export const BenchScenarioSchema = z
  .object({
    name: z.string().min(1).max(120),
    target: BenchTargetSchema,
    prompts: PromptSourceSchema,
    maxTokens: z.number().int().min(1).max(200_000),
    /** Ask the server to ignore EOS and always produce maxTokens (vLLM `ignore_eos`, as `vllm bench serve` does). */
    ignoreEos: z.boolean().default(false),
    stream: z.boolean().default(true),
    /** `chat_template_kwargs.enable_thinking`. */
    thinking: z.boolean().default(false),
    responseFormat: z
      .object({
        schema: z.record(z.string(), z.unknown()),
        /** Expected values by JSON pointer (`/status`); checked after the schema. */
        expected: z.record(z.string(), z.unknown()).optional(),
      })
      .strict()
      .optional(),
    /** Closed loop: levels are concurrencies. Open loop: levels are arrival rates (requests/s). */
    mode: z.enum(['closed', 'open']).default('closed'),
    levels: z
      .array(z.number().positive({ error: 'each level must be greater than 0' }).max(1024))
      .min(1)
      .max(16),
    perLevel: z.discriminatedUnion('kind', [
      z.object({ kind: z.literal('requests'), count: z.number().int().min(1).max(100_000) }).strict(),
      /** Closed loop: `rounds × level` requests, so every level sees the same number of turns per worker. */
      z.object({ kind: z.literal('rounds'), rounds: z.number().int().min(1).max(10_000) }).strict(),
      z.object({ kind: z.literal('duration'), seconds: z.number().positive().max(86_400) }).strict(),
    ]),
    warmupRequests: z.number().int().min(0).max(1000).default(0),
    stability: z.object({ requests: z.number().int().min(1).max(100_000), concurrency: z.number().int().min(1).max(1024) }).strict().optional(),
    requestTimeoutMs: z.number().int().min(100).max(3_600_000).default(300_000),
    /** Extra body fields sent as they are (vendor sampling parameters; the demo host's `demo_fault`). */
    extraBody: z.record(z.string(), z.unknown()).optional(),
  })
  .strict()
  .superRefine((s, ctx) => {
    if (s.mode === 'closed') {
      s.levels.forEach((l, i) => {
        if (!Number.isInteger(l)) ctx.addIssue({ code: 'custom', path: ['levels', i], message: 'a closed-loop level is a concurrency: a whole number ≥ 1' });
      });
    }
  });
export type BenchScenario = z.infer<typeof BenchScenarioSchema>;
export type BenchScenarioInput = z.input<typeof BenchScenarioSchema>;

export const SavedScenarioSchema = z
  .object({ id: z.string(), scenario: BenchScenarioSchema, createdAt: z.number(), updatedAt: z.number() })
  .strict();
export type SavedScenario = z.infer<typeof SavedScenarioSchema>;

export const RunStateSchema = z.enum(['running', 'completed', 'cancelled', 'failed', 'imported']);
export type RunState = z.infer<typeof RunStateSchema>;

export const PhaseSchema = z.enum(['warmup', 'level', 'stability']);

export const LevelResultSchema = z
  .object({
    phase: z.enum(['level', 'stability']),
    /** Concurrency (closed loop) or arrival rate (open loop). */
    level: z.number(),
    requests: z.number().int(),
    completed: z.number().int(),
    failed: z.number().int(),
    /** Ended by cancel before an answer: not counted as failed. */
    cancelled: z.number().int(),
    wallMs: z.number(),
    ttftP50Ms: z.number().nullable(),
    ttftP95Ms: z.number().nullable(),
    latencyP50Ms: z.number().nullable(),
    latencyP95Ms: z.number().nullable(),
    itlP50Ms: z.number().nullable(),
    itlP95Ms: z.number().nullable(),
    queueP95Ms: z.number().nullable(),
    /** Completion tokens ÷ wall time of the level. */
    outputTokPerS: z.number().nullable(),
    requestsPerS: z.number().nullable(),
    /** Tokens the answers said they carried; null when none said (unknown, never 0). */
    completionTokens: z.number().int().nullable(),
    promptTokens: z.number().int().nullable(),
    errorsByCode: z.record(z.string(), z.number().int()),
    /** Answers cut by max_tokens (finish_reason length). */
    truncated: z.number().int(),
    jsonParsed: z.number().int().nullable(),
    schemaValid: z.number().int().nullable(),
    /** Responses that could be checked (an answer came back). */
    checked: z.number().int().nullable(),
    partial: z.boolean(),
  })
  .strict();
export type LevelResult = z.infer<typeof LevelResultSchema>;

export const PeaksSchema = z
  .object({
    /** Device memory (on an AMD APU only the BIOS carve-out: the model lives in GTT). */
    vramMiB: z.number().nullable(),
    /** AMD GTT, system memory the GPU maps (where an APU's model lives); null where the host reports none (NVIDIA) or did not say; absent in runs stored before it was kept. */
    gttMiB: z.number().nullable().optional(),
    gpuUtilPct: z.number().nullable(),
    powerW: z.number().nullable(),
    kvCachePct: z.number().nullable(),
    samples: z.number().int(),
  })
  .strict();
export type Peaks = z.infer<typeof PeaksSchema>;

export const BenchRunSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    state: RunStateSchema,
    source: z.enum(['console', 'cli', 'guidellm']),
    scenario: BenchScenarioSchema.nullable(),
    /** `label/serviceId` when known. */
    upstream: z.string().nullable(),
    host: z.string().nullable(),
    model: z.string().nullable(),
    slots: z.number().int().nullable(),
    startedAt: z.number(),
    finishedAt: z.number().nullable(),
    levels: z.array(LevelResultSchema),
    peaks: PeaksSchema,
    baseline: z.boolean(),
    error: z.object({ code: z.string(), message: z.string() }).strict().nullable(),
    note: z.string().nullable(),
  })
  .strict();
export type BenchRun = z.infer<typeof BenchRunSchema>;

/** A stored run that no longer reads as one (shown as such, with what failed, so it can be deleted). */
export const DamagedRunSchema = z
  .object({
    id: z.string(),
    name: z.string().nullable(),
    startedAt: z.number().nullable(),
    host: z.string().nullable(),
    /** The first field that failed and why, e.g. `levels.0.completionTokens: Invalid input: expected number, received null`. */
    problem: z.string(),
  })
  .strict();
export type DamagedRun = z.infer<typeof DamagedRunSchema>;

export const BenchRequestSchema = z
  .object({
    seq: z.number().int(),
    phase: PhaseSchema,
    level: z.number(),
    startMs: z.number(),
    queueMs: z.number().nullable(),
    ttftMs: z.number().nullable(),
    totalMs: z.number().nullable(),
    itlMs: z.array(z.number()),
    promptTokens: z.number().int().nullable(),
    completionTokens: z.number().int().nullable(),
    finishReason: z.string().nullable(),
    status: z.number().int().nullable(),
    errorCode: z.string().nullable(),
    jsonOk: z.boolean().nullable(),
    schemaOk: z.boolean().nullable(),
    schemaError: z.string().nullable(),
  })
  .strict();
export type BenchRequest = z.infer<typeof BenchRequestSchema>;

export const BenchProgressSchema = z
  .object({
    runId: z.string(),
    name: z.string(),
    state: RunStateSchema,
    phase: PhaseSchema,
    level: z.number().nullable(),
    levelIndex: z.number().int(),
    levelCount: z.number().int(),
    done: z.number().int(),
    total: z.number().int(),
    errors: z.number().int(),
    elapsedMs: z.number(),
    etaMs: z.number().nullable(),
    message: z.string().nullable(),
  })
  .strict();
export type BenchProgress = z.infer<typeof BenchProgressSchema>;

/** One evaluation figure: value or unavailable (with the reason), and its formula for the hover. */
export const FigureSchema = z
  .object({
    key: z.string(),
    label: z.string(),
    value: z.number().nullable(),
    unit: z.string(),
    formula: z.string(),
    unavailableReason: z.string().nullable(),
    samples: z.number().int(),
    /** Nearest-rank P95 with fewer than 20 samples. */
    unstable: z.boolean(),
    estimate: z.boolean(),
  })
  .strict();
export type Figure = z.infer<typeof FigureSchema>;

export const EvaluationSchema = z
  .object({
    source: z.string(),
    fromMs: z.number(),
    toMs: z.number(),
    figures: z.array(FigureSchema),
  })
  .strict();
export type Evaluation = z.infer<typeof EvaluationSchema>;

export const CompareRowSchema = z
  .object({
    phase: z.enum(['level', 'stability']),
    level: z.number(),
    metric: z.enum(['ttftP50Ms', 'ttftP95Ms', 'latencyP50Ms', 'latencyP95Ms', 'itlP50Ms', 'outputTokPerS', 'requestsPerS']),
    a: z.number().nullable(),
    b: z.number().nullable(),
    delta: z.number().nullable(),
    deltaPct: z.number().nullable(),
  })
  .strict();
export type CompareRow = z.infer<typeof CompareRowSchema>;

export const BenchBaselineSchema = z.object({ runId: z.string(), model: z.string(), host: z.string().nullable(), tokPerS: z.number(), level: z.number() }).strict();

const RunRef = z.object({ runId: Id }).strict();
const Empty = z.object({}).strict();

/**
 * A scenario as the bridges take it: no prompt file named by path (the console would read any file it
 * can). The UI sends a chosen file's text inline; the CLI reads files itself.
 */
export const BridgeScenarioSchema = BenchScenarioSchema.refine((s) => s.prompts.kind !== 'jsonl', {
  path: ['prompts'],
  message: 'a prompt file cannot be named through the console: send its lines inline (kind "inline"); the CLI reads files itself',
});

export const benchInvokeChannels = {
  'bench.listScenarios': { input: Empty, output: z.object({ scenarios: z.array(SavedScenarioSchema) }).strict() },
  'bench.saveScenario': {
    input: z.object({ id: Id.optional(), scenario: BridgeScenarioSchema }).strict(),
    output: SavedScenarioSchema,
  },
  'bench.deleteScenario': { input: z.object({ id: Id }).strict(), output: z.object({ id: z.string() }).strict() },
  /** Checks a scenario (schema, prompt file, JSON Schema, target) without running it. */
  'bench.check': {
    input: z.object({ scenario: BridgeScenarioSchema }).strict(),
    output: z.object({ prompts: z.number().int(), upstream: z.string().nullable() }).strict(),
  },
  'bench.start': {
    input: z.object({ scenario: BridgeScenarioSchema.optional(), scenarioId: Id.optional() }).strict(),
    output: z.object({ runId: z.string() }).strict(),
  },
  'bench.cancel': { input: RunRef, output: z.object({ runId: z.string(), cancelled: z.boolean() }).strict() },
  'bench.listRuns': {
    input: z.object({ limit: z.number().int().min(1).max(500).default(50) }).strict(),
    /** `damaged`: rows that no longer read as runs (deletable with bench.deleteRun); bench.getRun answers BENCH_RUN_DAMAGED for them. */
    output: z.object({ runs: z.array(BenchRunSchema), damaged: z.array(DamagedRunSchema) }).strict(),
  },
  'bench.getRun': { input: RunRef, output: z.object({ run: BenchRunSchema, requests: z.array(BenchRequestSchema) }).strict() },
  'bench.deleteRun': { input: RunRef, output: z.object({ runId: z.string() }).strict() },
  /** Marks the run as the baseline of its model (and host): its best steady tok/s feeds the degradation alerts. */
  'bench.setBaseline': { input: RunRef, output: BenchBaselineSchema },
  'bench.compare': {
    input: z.object({ a: Id, b: Id }).strict(),
    output: z.object({ a: BenchRunSchema, b: BenchRunSchema, rows: z.array(CompareRowSchema) }).strict(),
  },
  'bench.export': {
    input: z.object({ runId: Id, format: z.enum(['json', 'markdown']) }).strict(),
    output: z.object({ filename: z.string(), mime: z.string(), text: z.string() }).strict(),
  },
  /** GuideLLM's JSON report (benchmarks.json); each concurrent benchmark becomes a level. */
  'bench.importGuidellm': {
    input: z.object({ text: z.string().min(2).max(50_000_000), name: z.string().max(120).optional() }).strict(),
    output: z.object({ runId: z.string(), levels: z.number().int(), notes: z.array(z.string()) }).strict(),
  },
  'bench.evaluate': {
    input: z
      .object({
        source: z.discriminatedUnion('kind', [
          z.object({ kind: z.literal('run'), runId: Id }).strict(),
          z.object({ kind: z.literal('window'), fromMs: z.number(), toMs: z.number(), model: z.string().max(200).optional() }).strict(),
        ]),
      })
      .strict(),
    output: EvaluationSchema,
  },
} as const;

export const benchEventChannels = {
  /** A running benchmark's progress, at most a few times a second, and once at the end. */
  'bench.progress': BenchProgressSchema,
} as const;
