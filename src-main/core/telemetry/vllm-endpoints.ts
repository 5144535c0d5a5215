import { z } from 'zod';
import { finiteOrNull, parseJsonBody } from './json-body.js';

// vLLM's small JSON endpoints (wire-formats §2, §3). Each reader returns null
// for a body it cannot read; none throws.

const IsSleepingSchema = z.object({ is_sleeping: z.boolean() });
const VersionSchema = z.object({ version: z.string() });
const ModelsSchema = z.object({
  data: z.array(
    z.object({
      id: z.string(),
      root: z.string().nullish(),
      parent: z.string().nullish(),
      max_model_len: z.number().nullish(),
    }),
  ),
});

/** `GET /is_sleeping` → `{"is_sleeping": true}`; null for anything else (404 without dev mode). */
export function parseVllmIsSleeping(text: string): boolean | null {
  const r = IsSleepingSchema.safeParse(parseJsonBody(text));
  return r.success ? r.data.is_sleeping : null;
}

/** `GET /version` → `"0.10.1"`. */
export function parseVllmVersion(text: string): string | null {
  const r = VersionSchema.safeParse(parseJsonBody(text));
  return r.success ? r.data.version : null;
}

export interface VllmModelCard {
  id: string;
  /** null for LoRA adapters (they carry no max_model_len). */
  maxModelLen: number | null;
  isAdapter: boolean;
  /** Where the weights came from: a local folder (`/data/models/…`) or a hub id (`Qwen/…`). */
  root: string | null;
}

/** `GET /v1/models`: one card per served name; LoRA adapters have `parent` set. */
export function parseVllmModels(text: string): VllmModelCard[] | null {
  const r = ModelsSchema.safeParse(parseJsonBody(text));
  if (!r.success) return null;
  return r.data.data.map((m) => ({ id: m.id, maxModelLen: finiteOrNull(m.max_model_len), isAdapter: m.parent != null, root: m.root ?? null }));
}

/** The base model's local folder (its root when that is an absolute path); null for a hub id or none. */
export function vllmModelPath(cards: readonly VllmModelCard[] | null): string | null {
  const root = cards?.find((c) => !c.isAdapter)?.root ?? null;
  return root !== null && root.startsWith('/') ? root : null;
}

/** The base model's serving context: the first non-adapter card's max_model_len. */
export function vllmMaxModelLen(cards: readonly VllmModelCard[] | null): number | null {
  return cards?.find((c) => !c.isAdapter && c.maxModelLen !== null)?.maxModelLen ?? null;
}
