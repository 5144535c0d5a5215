// Per-model request shaping (config `proxy.models`): the rules that apply to
// the model a request is sent to, and what they do to its max_tokens. A chat or
// completions request that names none gets the model's default; one above the
// ceiling is clamped to it or refused. The note says what was done, for the
// answer's x-gpu-console-max-tokens header.
import type { ModelShaping, ProxyConfig } from '../config/index.js';
import type { WireError } from './errors.js';
import { wire, type Endpoint } from './exchange.js';
import type { UpstreamSpec } from './registry.js';

/** What proxy.models says for one upstream's model, worked out once per config and upstream. */
interface ModelPlan {
  shaping: ModelShaping | null;
  timeouts: UpstreamTimeouts;
}

const plans = new WeakMap<ProxyConfig, Map<UpstreamSpec, ModelPlan>>();

function planFor(settings: ProxyConfig, spec: UpstreamSpec): ModelPlan {
  let perSpec = plans.get(settings);
  if (!perSpec) {
    perSpec = new Map();
    plans.set(settings, perSpec);
  }
  let plan = perSpec.get(spec);
  if (plan === undefined) {
    plan = makePlan(settings, spec);
    perSpec.set(spec, plan);
  }
  return plan;
}

/** The rules of one upstream's model, or null; keys are names or aliases, matched in any case. */
export function shapingFor(settings: ProxyConfig, spec: UpstreamSpec): ModelShaping | null {
  return planFor(settings, spec).shaping;
}

/** The model's proxy.models timeouts where set, else the proxy's global ones. */
export function timeoutsFor(settings: ProxyConfig, spec: UpstreamSpec): UpstreamTimeouts {
  return planFor(settings, spec).timeouts;
}

function makePlan(settings: ProxyConfig, spec: UpstreamSpec): ModelPlan {
  const names = new Set([spec.model, ...spec.aliases].map((n) => n.toLowerCase()));
  const key = Object.keys(settings.models).find((k) => names.has(k.toLowerCase()));
  const shaping = key === undefined ? null : (settings.models[key] ?? null);
  const own = shaping?.timeouts;
  const at = (field: string) => `proxy.models.${key}.timeouts.${field}`;
  return {
    shaping,
    timeouts: {
      headersMs: own?.headersMs ?? settings.upstreamHeadersTimeoutMs,
      idleMs: own?.idleMs ?? settings.upstreamIdleTimeoutMs,
      totalMs: own?.totalMs ?? null,
      from: {
        headers: own?.headersMs !== undefined ? at('headersMs') : 'proxy.upstreamHeadersTimeoutMs',
        idle: own?.idleMs !== undefined ? at('idleMs') : 'proxy.upstreamIdleTimeoutMs',
        total: at('totalMs'),
      },
    },
  };
}

/** OpenAI's two names for the answer's length: chat has both (max_tokens deprecated), completions only max_tokens. */
const LENGTH_FIELDS: Partial<Record<Endpoint, readonly string[]>> = {
  chat: ['max_tokens', 'max_completion_tokens'],
  completions: ['max_tokens'],
};

export interface MaxTokensShape {
  /** Members the body gets that it did not have (spliced in without re-serialising). */
  added: Record<string, number> | null;
  /** Members whose value changes (the body is re-serialised). */
  changed: Record<string, number> | null;
  /** For the answer's header: `default 512`, `clamped 39868->4096`; null when nothing was done. */
  note: string | null;
}

const UNCHANGED: MaxTokensShape = { added: null, changed: null, note: null };

/**
 * What the model's max_tokens rules do to this body; a WireError (400 max_tokens_over_ceiling,
 * naming the ceiling) when it asks for more than the ceiling and the rule is to refuse.
 */
export function shapeMaxTokens(json: Record<string, unknown>, endpoint: Endpoint, model: string, rules: ModelShaping | null): MaxTokensShape | WireError {
  const mt = rules?.maxTokens;
  const fields = LENGTH_FIELDS[endpoint];
  if (!mt || !fields) return UNCHANGED;
  let named = false;
  let changed: Record<string, number> | null = null;
  let note: string | null = null;
  for (const field of fields) {
    const v = json[field];
    if (v === undefined || v === null) continue;
    named = true;
    // A value that is not a number is the server's to refuse: the proxy shapes, it does not validate.
    if (typeof v !== 'number' || mt.ceiling === undefined || v <= mt.ceiling) continue;
    if (mt.overCeiling === 'refuse') {
      return wire(400, 'max_tokens_over_ceiling', `${field} ${v} is over the ceiling of ${mt.ceiling} for model ${model}; ask for at most ${mt.ceiling}`, {
        param: field,
        extra: { ceiling: mt.ceiling },
      });
    }
    (changed ??= {})[field] = mt.ceiling;
    note = `clamped ${v}->${mt.ceiling}`;
  }
  if (named || mt.default === undefined) return changed ? { added: null, changed, note } : UNCHANGED;
  // Named by neither field: the default, as max_tokens (every OpenAI-compatible server reads it). A
  // present `null` is replaced rather than added next to (a second key's meaning differs by parser).
  const present = fields.some((f) => f in json);
  const value = { max_tokens: mt.default };
  return present ? { added: null, changed: value, note: `default ${mt.default}` } : { added: value, changed: null, note: `default ${mt.default}` };
}

export function isWireError(x: MaxTokensShape | WireError): x is WireError {
  return (x as WireError).status !== undefined;
}

/**
 * The body with new members after its opening brace, without re-serialising it. Only for a body
 * already parsed as a JSON object with at least one member (it names a model) that has none of them.
 */
export function withMembers(body: Buffer, members: string): Buffer {
  const open = body.indexOf(0x7b);
  return Buffer.concat([body.subarray(0, open + 1), Buffer.from(members), body.subarray(open + 1)]);
}


/** The upstream timeouts of one request, each with the config field it came from (named when it fires). */
export interface UpstreamTimeouts {
  headersMs: number;
  idleMs: number;
  /** null: no total deadline. */
  totalMs: number | null;
  from: { headers: string; idle: string; total: string };
}
