// Deterministic stand-ins for what a model produces: token counts estimated
// from text, English-ish words from a seeded PRNG, JSON for simple schemas,
// unit-length embeddings, and the gibberish of vllm#29341 (level-2 sleep
// woken without reload_weights).

/** FNV-1a over a string, 32-bit. */
export function hashString(text: string, seed = 0x811c9dc5): number {
  let h = seed >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** mulberry32: small, fast, good enough for simulated text. */
export function createPrng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** ≈ chars/4, the usual rule of thumb for BPE tokenizers on English text. */
export function estimateTextTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** A plausible natural answer length (60–120 tokens) fixed by the prompt. */
export function naturalLength(promptKey: string): number {
  return 60 + (hashString(promptKey, 0x9e3779b9) % 61);
}

const WORDS = (
  'the a of to and in is for on that with as it be by this are from at we or an model server gpu ' +
  'request latency token memory cache batch queue throughput operator system value result data ' +
  'answer question report host service time rate load sleep wake budget cost window context ' +
  'simple clear short stable measured expected current higher lower first next each every most ' +
  'can will should may does shows keeps runs reads sends holds returns improves reduces ' +
  'because while when after before during under above between across'
).split(' ');

/** Tokens the damaged weights of vllm#29341 produce; no English word among them. */
export const GIBBERISH_TOKENS = ['ĠĊ', '!!', '▁▁', '¿¿', 'ꙮ', '<0x0A>', 'ĉĉ', '�', '%%'];

export interface TextGenOptions {
  seed: number;
  gibberish?: boolean;
}

/** Produces `count` tokens; the first carries no leading space. */
export function generateTokens(count: number, options: TextGenOptions): string[] {
  const next = createPrng(options.seed);
  const out: string[] = [];
  let sentenceStart = true;
  for (let i = 0; i < count; i++) {
    if (options.gibberish) {
      out.push(GIBBERISH_TOKENS[Math.floor(next() * GIBBERISH_TOKENS.length)]!);
      continue;
    }
    let word = WORDS[Math.floor(next() * WORDS.length)]!;
    if (sentenceStart) word = word[0]!.toUpperCase() + word.slice(1);
    sentenceStart = false;
    const endSentence = i > 0 && i < count - 1 && next() < 0.09;
    if (endSentence || i === count - 1) {
      word += '.';
      sentenceStart = true;
    }
    out.push(i === 0 ? word : ' ' + word);
  }
  return out;
}

/** Whether generated text looks like the gibberish of a model without weights. */
export function isGibberish(text: string): boolean {
  return GIBBERISH_TOKENS.some((t) => text.includes(t)) && !/[a-z]{3,} [a-z]{2,}/.test(text);
}

type JsonSchema = {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  enum?: unknown[];
  const?: unknown;
  minItems?: number;
  maxItems?: number;
  minimum?: number;
  maximum?: number;
};

function valueFor(schema: JsonSchema | undefined, next: () => number, depth: number): unknown {
  if (!schema || depth > 6) return null;
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[Math.floor(next() * schema.enum.length)];
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  switch (type ?? (schema.properties ? 'object' : 'string')) {
    case 'object': {
      const obj: Record<string, unknown> = {};
      for (const [key, sub] of Object.entries(schema.properties ?? {})) obj[key] = valueFor(sub, next, depth + 1);
      return obj;
    }
    case 'array': {
      const min = schema.minItems ?? 1;
      const max = Math.max(min, Math.min(schema.maxItems ?? 3, min + 3));
      const n = min + Math.floor(next() * (max - min + 1));
      return Array.from({ length: n }, () => valueFor(schema.items, next, depth + 1));
    }
    case 'integer': {
      const lo = schema.minimum ?? 0;
      const hi = schema.maximum ?? lo + 100;
      return Math.floor(lo + next() * (hi - lo + 1));
    }
    case 'number': {
      const lo = schema.minimum ?? 0;
      const hi = schema.maximum ?? lo + 100;
      return Math.round((lo + next() * (hi - lo)) * 100) / 100;
    }
    case 'boolean':
      return next() < 0.5;
    case 'null':
      return null;
    default:
      return generateTokens(2 + Math.floor(next() * 4), { seed: Math.floor(next() * 2 ** 32) })
        .join('')
        .replace(/\.$/, '');
  }
}

/** A JSON document for a simple schema (objects, arrays, scalars, enum/const), split into ~4-char tokens. */
export function generateJsonTokens(schema: unknown, seed: number): string[] {
  const text = JSON.stringify(valueFor((schema ?? { type: 'object' }) as JsonSchema, createPrng(seed), 0));
  const tokens: string[] = [];
  for (let i = 0; i < text.length; i += 4) tokens.push(text.slice(i, i + 4));
  return tokens;
}

/** A deterministic unit vector for `text`. */
export function embeddingFor(text: string, dim: number): number[] {
  const next = createPrng(hashString(text));
  const v = Array.from({ length: dim }, () => next() * 2 - 1);
  const norm = Math.sqrt(v.reduce((s, x) => s + x * x, 0)) || 1;
  return v.map((x) => x / norm);
}
