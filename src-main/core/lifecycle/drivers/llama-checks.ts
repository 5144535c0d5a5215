// What llama-server answers after an action, read leniently with zod
// (wire-formats §4.3): /health (503 "Loading model" = still loading), /props
// (total_slots once the model is in), a 1-token chat completion, and in router
// mode GET /models (each model's status.value, `failed` and `exit_code`).
import { z } from 'zod';
import { AppError, toAppError } from '../../base/index.js';
import { LifecycleErrorCode } from '../errors.js';
import type { CheckOutcome, DriverCheck, HttpAnswer, LifecycleTargetConfig } from './types.js';

function json(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

const OpenAiErrorSchema = z.object({ error: z.object({ message: z.string().nullish(), type: z.string().nullish() }).passthrough() }).passthrough();
const PlainErrorSchema = z.object({ error: z.string() }).passthrough();

/** An error body in words: `unavailable_error: Loading model`, the router's `{"error": "…"}`, else the body's start. */
export function errorText(text: string): string {
  const body = json(text);
  const oa = OpenAiErrorSchema.safeParse(body);
  if (oa.success) return [oa.data.error.type, oa.data.error.message].filter((s) => s).join(': ') || text.slice(0, 120);
  const plain = PlainErrorSchema.safeParse(body);
  if (plain.success) return plain.data.error.slice(0, 200);
  return text.replace(/\s+/g, ' ').trim().slice(0, 120);
}

/** llama-server's answer to every route while it loads the model. */
export const isLoading = (a: HttpAnswer): boolean => a.status === 503 && /loading/i.test(errorText(a.text));

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

export function llamaHealthCheck(): DriverCheck {
  return {
    name: 'health',
    text: 'GET /health answers 200 (503 "Loading model" is waited for, up to the deadline)',
    async run(io, t): Promise<CheckOutcome> {
      try {
        const r = await io.http('GET', { path: '/health' }, null, t.timeoutMs);
        if (r.status === 200) return { ok: true, line: 'health: HTTP 200' };
        if (isLoading(r)) return { ok: false, line: `health: HTTP 503 Loading model (still loading ${seconds(t.sinceStepsMs)} after the calls)` };
        return { ok: false, line: `health: HTTP ${r.status} ${errorText(r.text)}` };
      } catch (err) {
        return { ok: false, line: `health: no answer (${toAppError(err).message})` };
      }
    },
  };
}

const PropsSchema = z
  .object({
    total_slots: z.number().int().nullish(),
    default_generation_settings: z.object({ n_ctx: z.number().nullish() }).passthrough().nullish(),
    model_alias: z.string().nullish(),
    model_path: z.string().nullish(),
    build_info: z.string().nullish(),
    is_sleeping: z.boolean().nullish(),
  })
  .passthrough();

/** GET /props: the model is in once it reports its slots (`query`: `?model=…` in router mode). */
export function llamaPropsCheck(query = ''): DriverCheck {
  return {
    name: 'props',
    text: `GET /props${query} answers with total_slots (the model is loaded)`,
    after: ['health'],
    async run(io, t): Promise<CheckOutcome> {
      try {
        const r = await io.http('GET', { path: `/props${query}` }, null, t.timeoutMs);
        if (isLoading(r)) return { ok: false, line: 'props: HTTP 503 Loading model (still loading)' };
        if (r.status !== 200) return { ok: false, line: `props: HTTP ${r.status} ${errorText(r.text)}` };
        const p = PropsSchema.safeParse(json(r.text));
        if (!p.success) return { ok: false, line: `props: HTTP 200 but not the /props object: ${JSON.stringify(r.text.slice(0, 80))}` };
        const d = p.data;
        if (typeof d.total_slots !== 'number' || d.total_slots < 1) return { ok: false, line: 'props: answered without total_slots (model not loaded yet)' };
        const parts = [`${d.total_slots} slot${d.total_slots === 1 ? '' : 's'}`];
        if (typeof d.default_generation_settings?.n_ctx === 'number') parts.push(`n_ctx ${d.default_generation_settings.n_ctx} per slot`);
        const model = d.model_alias ?? d.model_path;
        if (model) parts.push(`model ${model}`);
        if (d.build_info) parts.push(`build ${d.build_info}`);
        if (d.is_sleeping === true) parts.push('sleeping (--sleep-idle-seconds; the probe wakes it)');
        return { ok: true, line: `props: ${parts.join(', ')}` };
      } catch (err) {
        return { ok: false, line: `props: no answer (${toAppError(err).message})` };
      }
    },
  };
}

const ChatSchema = z
  .object({
    choices: z.array(z.object({ message: z.object({ content: z.string().nullish() }).passthrough().nullish(), finish_reason: z.string().nullish() }).passthrough()).min(1),
    usage: z.object({ completion_tokens: z.number().nullish() }).passthrough().nullish(),
  })
  .passthrough();

/**
 * One token of chat: the model is loaded and decodes. The word is not judged
 * (one token of a small or quantised model can look like anything).
 */
export function chatProbeCheck(model: string, after: readonly string[]): DriverCheck {
  return {
    name: 'probe',
    text: 'a 1-token chat completion answers',
    after,
    notAttempted: `probe: not attempted (${after.join(' and ')} did not hold in time)`,
    async run(io, t): Promise<CheckOutcome> {
      const body = JSON.stringify({ model, messages: [{ role: 'user', content: 'Reply with one word.' }], max_tokens: 1, temperature: 0, stream: false });
      try {
        const r = await io.http('POST', { path: '/v1/chat/completions' }, body, t.timeoutMs);
        if (r.status !== 200) return { ok: false, line: `probe: HTTP ${r.status} ${errorText(r.text)}` };
        const c = ChatSchema.safeParse(json(r.text));
        if (!c.success) return { ok: false, line: `probe: HTTP 200 without a completion: ${JSON.stringify(r.text.slice(0, 80))}` };
        const content = c.data.choices[0]!.message?.content ?? '';
        const n = c.data.usage?.completion_tokens;
        return { ok: true, line: `probe: 1-token chat answered ${JSON.stringify(content.slice(0, 40))}${typeof n === 'number' ? ` (${n} token${n === 1 ? '' : 's'})` : ''}` };
      } catch (err) {
        return { ok: false, line: `probe: ${toAppError(err).message}` };
      }
    },
  };
}

// --- router mode ------------------------------------------------------------

const RouterModelSchema = z
  .object({
    id: z.string(),
    status: z
      .object({ value: z.string(), failed: z.boolean().nullish(), exit_code: z.number().nullish(), progress: z.unknown().optional() })
      .passthrough()
      .nullish(),
  })
  .passthrough();
const RouterModelsSchema = z.object({ data: z.array(z.unknown()) }).passthrough();

export interface RouterModelState {
  id: string;
  /** `unloaded` | `loading` | `loaded` | `sleeping` | `downloading` | what else a build says. */
  value: string;
  failed: boolean;
  exitCode: number | null;
}

/** GET /models of a router: each model's status; null when the body has no per-model status (not a router). */
export function parseRouterModels(text: string): RouterModelState[] | null {
  const body = RouterModelsSchema.safeParse(json(text));
  if (!body.success) return null;
  const out: RouterModelState[] = [];
  for (const item of body.data.data) {
    const m = RouterModelSchema.safeParse(item);
    if (!m.success) continue;
    if (!m.data.status) return null; // single-model /models (OpenAI list): no status at all
    out.push({ id: m.data.id, value: m.data.status.value, failed: m.data.status.failed === true, exitCode: m.data.status.exit_code ?? null });
  }
  return out;
}

export type RouterExpectation = 'loaded' | 'unloaded' | 'listed';

/** The model's status in the router after a load (`loaded`), an unload (`unloaded`) or a router restart (`listed`). */
export function routerModelCheck(target: LifecycleTargetConfig, expect: RouterExpectation): DriverCheck {
  const model = target.model;
  const want = expect === 'listed' ? `lists ${model} and it has not failed` : `reports ${model} ${expect}`;
  return {
    name: 'model',
    text: `GET /models ${want}`,
    async run(io, t): Promise<CheckOutcome> {
      let r: HttpAnswer;
      try {
        r = await io.http('GET', { path: '/models' }, null, t.timeoutMs);
      } catch (err) {
        return { ok: false, line: `router: GET /models no answer (${toAppError(err).message})` };
      }
      if (r.status !== 200) return { ok: false, line: `router: GET /models HTTP ${r.status} ${errorText(r.text)}` };
      const models = parseRouterModels(r.text);
      if (models === null) {
        const fatal = new AppError(LifecycleErrorCode.NOT_ROUTER_MODE, `${target.upstream}: GET /models has no per-model status, so this llama-server is not in router mode; use the llama-server driver (lifecycle.driver) or start it without -m`, {
          details: { upstream: target.upstream },
        });
        return { ok: false, line: 'router: GET /models has no per-model status (not router mode)', fatal };
      }
      const m = models.find((x) => x.id === model);
      if (!m) {
        const known = models.map((x) => x.id).slice(0, 8).join(', ') || 'none';
        const line = `router: GET /models does not list ${model} (it lists: ${known})`;
        // Right after a router restart its roster may still be coming; after a load or unload it is not.
        if (expect === 'listed') return { ok: false, line };
        return { ok: false, line, fatal: new AppError(LifecycleErrorCode.ROUTER_MODEL_UNKNOWN, `${line}; lifecycle uses the service's model name as the router's model id`, { details: { model, known: models.map((x) => x.id).slice(0, 50) } }) };
      }
      const state = `${m.value}${m.failed ? `, failed${m.exitCode !== null ? ` (exit code ${m.exitCode})` : ''}` : ''}`;
      if (m.failed && expect !== 'unloaded') {
        const fatal = new AppError(
          LifecycleErrorCode.ROUTER_LOAD_FAILED,
          `the router reports ${model} failed to load${m.exitCode !== null ? ` (its llama-server exited ${m.exitCode})` : ''}; its log on ${target.label} says why`,
          { details: { model, exitCode: m.exitCode, status: m.value } },
        );
        return { ok: false, line: `router: ${model} ${state}`, fatal };
      }
      if (expect === 'listed') return { ok: true, line: `router: lists ${model} (${state})` };
      if (expect === 'loaded') {
        if (m.value === 'loaded') return { ok: true, line: `router: ${model} loaded` };
        if (m.value === 'sleeping') return { ok: true, line: `router: ${model} loaded, sleeping (it wakes on the probe)` };
        return { ok: false, line: `router: ${model} ${state} (waiting for loaded, ${seconds(t.sinceStepsMs)} so far)` };
      }
      if (m.value === 'unloaded') return { ok: true, line: `router: ${model} unloaded` };
      return { ok: false, line: `router: ${model} ${state} (waiting for unloaded)` };
    },
  };
}
