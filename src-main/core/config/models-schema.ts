// `proxy.models`: per-model request shaping, keyed by a served model name or
// alias. `maxTokens` gives a request without max_tokens the model's default and
// holds one above the ceiling to it (clamped, or refused); `timeouts` replace
// the proxy's global upstream timeouts for that model and add a total deadline.
// Field notes §2: one 39,868-token request held a slot for minutes, and the
// team ran 90 s for one model and 120 s for another.
import { z } from 'zod';
import { intRange } from './number-fields.js';

/** The largest max_tokens any server here is asked for (far above any context length served). */
const MAX_TOKENS = 10_000_000;

export const ModelMaxTokensSchema = z
  .object({
    /** Given to a chat or completions request that names no max_tokens / max_completion_tokens. */
    default: intRange(1, MAX_TOKENS).optional(),
    /** The most a request may ask for. */
    ceiling: intRange(1, MAX_TOKENS).optional(),
    /** A request above the ceiling: held to it (`clamp`, said in a header) or refused 400 (`refuse`). */
    overCeiling: z.enum(['clamp', 'refuse'], { error: 'must be clamp or refuse' }).default('clamp'),
  })
  .strict()
  .superRefine((m, ctx) => {
    if (m.default !== undefined && m.ceiling !== undefined && m.ceiling < m.default) {
      ctx.addIssue({ code: 'custom', path: ['ceiling'], message: `ceiling (${m.ceiling}) is below default (${m.default}); a request given the default would be over the ceiling` });
    }
  });

const timeoutMs = intRange(1_000, 3_600_000);

export const ModelTimeoutsSchema = z
  .object({
    /** Until the response starts (replaces proxy.upstreamHeadersTimeoutMs for this model). */
    headersMs: timeoutMs.optional(),
    /** Longest silence between two chunks (replaces proxy.upstreamIdleTimeoutMs). */
    idleMs: timeoutMs.optional(),
    /** The whole exchange with the upstream, first byte sent to last byte received. No total deadline when absent. */
    totalMs: intRange(1_000, 86_400_000).optional(),
  })
  .strict();

export const ModelShapingSchema = z
  .object({
    maxTokens: ModelMaxTokensSchema.optional(),
    timeouts: ModelTimeoutsSchema.optional(),
  })
  .strict();

/** Keys: a served model name or alias (any case); the config check refuses one that names none, or two for one model. */
export const ModelsConfigSchema = z.record(z.string().trim().min(1, { error: 'a model name must not be empty' }).max(200), ModelShapingSchema).default({});

export type ModelShaping = z.infer<typeof ModelShapingSchema>;
export type ModelsConfig = z.infer<typeof ModelsConfigSchema>;

type Path = (string | number)[];

/**
 * Each key names a served model or alias (like a group's members), and one model is shaped by one
 * entry: `served` maps every served name and alias (lower case) to its model's name.
 */
export function modelShapingIssues(models: ModelsConfig, served: ReadonlyMap<string, string>): { path: Path; message: string }[] {
  const issues: { path: Path; message: string }[] = [];
  const byModel = new Map<string, string>();
  for (const name of Object.keys(models)) {
    const model = served.get(name.toLowerCase());
    if (model === undefined) {
      issues.push({ path: ['proxy', 'models', name], message: `"${name}" is not a served model or alias; proxy.models keys name one (groups are shaped by their models)` });
      continue;
    }
    const first = byModel.get(model.toLowerCase());
    if (first !== undefined) issues.push({ path: ['proxy', 'models', name], message: `"${name}" and "${first}" both shape model "${model}"; keep one entry` });
    else byModel.set(model.toLowerCase(), name);
  }
  return issues;
}
