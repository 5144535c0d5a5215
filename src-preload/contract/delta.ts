import { z } from 'zod';

// The delta engine under the tick codecs (tick-codec.ts): what changed between
// two states of a JSON tree whose lists are keyed (hosts by label, GPUs by
// index, services by id) and whose records are patched key by key. Pure and
// environment-neutral: main diffs what it last sent against what it sends now;
// the renderer applies the (already schema-checked) patch and keeps every
// unchanged object as it was, so React and zustand see what changed by identity.
//
// Patch forms (each part present only when something changed):
//   object  { set?: {field: value}, unset?: [optional field], <list field>?: ListPatch, <record field>?: RecordPatch }
//           — a field outside lists/records is replaced whole when it differs (nested objects too)
//   list    { order?: [key…], add?: [item…], patch?: [{key, …object patch}], all?: [item…] }
//           — `order` is the new key sequence when keys were added, removed or moved;
//             `all` replaces the list when its keys are not unique (nothing to key by)
//   record  { set?: {key: value}, unset?: [key…] }

/** How one level of the tree is patched. */
export interface ObjectSpec {
  /** Fields that hold keyed lists, patched item by item. */
  readonly lists?: Readonly<Record<string, ListSpec>>;
  /** Fields that hold string-keyed records, patched key by key. */
  readonly records?: readonly string[];
}

export interface ListSpec {
  /** The field that names an item: never changes, never in an item's `set`. */
  readonly keyField: string;
  readonly item: ObjectSpec;
}

type Obj = Record<string, unknown>;
type Key = string | number;

interface ListPatch {
  order?: Key[];
  add?: Obj[];
  patch?: Array<Obj & { key: Key }>;
  all?: Obj[];
}

interface RecordPatch {
  set?: Obj;
  unset?: string[];
}

/** A patch that cannot be applied to the state the decoder holds: the message names where. */
export class DeltaApplyError extends Error {
  constructor(
    readonly where: string,
    message: string,
  ) {
    super(`${where}: ${message}`);
    this.name = 'DeltaApplyError';
  }
}

// ── schema helpers: the wire schemas are built from the real ones ──────────

/** Fields of a strict object schema that may be absent (`.optional()`): the ones `unset` may name. */
export function optionalKeys(schema: z.ZodObject): string[] {
  return Object.entries(schema.shape as Record<string, z.ZodType>)
    .filter(([, field]) => field.safeParse(undefined).success)
    .map(([key]) => key);
}

/** `unset`: optional fields of `schema` that disappeared. */
export function unsetSchema(schema: z.ZodObject) {
  const keys = optionalKeys(schema);
  if (keys.length === 0) throw new Error('unsetSchema: the schema has no optional field');
  return z.array(z.enum(keys as [string, ...string[]])).min(1);
}

/**
 * `set`: some fields of `schema`, each checked by its own field schema. Only the
 * fields present are visited (a zod `.partial()` visits every field of the shape,
 * which made a delta that touches every GPU slower to check than the whole
 * fleet); an unknown field, or `undefined` for a required one, is refused.
 */
export function sparseObjectSchema<S extends z.ZodObject>(schema: S): z.ZodType<Partial<z.output<S>>> {
  const shape = schema.shape as Record<string, z.ZodType>;
  const has = (key: string): boolean => Object.prototype.hasOwnProperty.call(shape, key);
  return z.unknown().transform((value, ctx) => {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      ctx.addIssue({ code: 'custom', message: 'Invalid input: expected object' });
      return z.NEVER;
    }
    const out: Obj = {};
    let failed = false;
    for (const key of Object.keys(value)) {
      if (!has(key)) {
        ctx.addIssue({ code: 'custom', message: `Unrecognized key: "${key}"`, path: [key] });
        failed = true;
        continue;
      }
      const parsed = shape[key]!.safeParse((value as Obj)[key]);
      if (parsed.success) assignOwn(out, key, parsed.data);
      else {
        failed = true;
        for (const issue of parsed.error.issues) ctx.addIssue({ code: 'custom', message: issue.message, path: [key, ...issue.path] });
      }
    }
    return failed ? z.NEVER : (out as Partial<z.output<S>>);
  });
}

/** A keyed list's patch; `item` validates added items in full, `patch` one changed item. */
export function listPatchSchema<K extends z.ZodType, I extends z.ZodType, P extends z.ZodType>(key: K, item: I, patch: P) {
  return z
    .object({
      order: z.array(key).optional(),
      add: z.array(item).min(1).optional(),
      patch: z.array(patch).min(1).optional(),
      all: z.array(item).optional(),
      // the compact form's numbers by item (tick-compact.ts): item position, field position, value
      n: z.array(z.number()).optional(),
      d: z.array(z.number().int()).optional(),
    })
    .strict();
}

// ── diff (the encoder's side) ─────────────────────────────────────────────

/** Deep equality of JSON values; a key holding `undefined` counts as absent (as JSON sends it). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ao = a as Obj;
  const bo = b as Obj;
  let count = 0;
  for (const key of Object.keys(ao)) {
    if (ao[key] === undefined) continue;
    count++;
    if (!jsonEqual(ao[key], bo[key])) return false;
  }
  for (const key of Object.keys(bo)) if (bo[key] !== undefined) count--;
  return count === 0;
}

/** The patch that turns `prev` into `next`, or undefined when they are equal. */
export function diffObject(prev: Obj, next: Obj, spec: ObjectSpec, keyField?: string): Obj | undefined {
  if (prev === next) return undefined;
  const patch: Obj = {};
  let set: Obj | undefined;
  let unset: string[] | undefined;
  // An optional list (a GPU's processes) that is absent on one side is set or unset whole, like any field.
  const keyedList = (key: string): boolean => spec.lists?.[key] !== undefined && Array.isArray(prev[key]) && Array.isArray(next[key]);
  const structured = (key: string): boolean => key === keyField || keyedList(key) || spec.records?.includes(key) === true;
  for (const key of Object.keys(next)) {
    if (structured(key)) continue;
    const value = next[key];
    if (value === undefined) continue;
    if (!jsonEqual(prev[key], value)) (set ??= {})[key] = value;
  }
  for (const key of Object.keys(prev)) {
    if (structured(key) || prev[key] === undefined) continue;
    if (next[key] === undefined) (unset ??= []).push(key);
  }
  if (set) patch.set = set;
  if (unset) patch.unset = unset;
  for (const [field, list] of Object.entries(spec.lists ?? {})) {
    if (!keyedList(field)) continue;
    const p = diffList(prev[field] as Obj[], next[field] as Obj[], list);
    if (p) patch[field] = p;
  }
  for (const field of spec.records ?? []) {
    const p = diffRecord(prev[field] as Obj, next[field] as Obj);
    if (p) patch[field] = p;
  }
  return Object.keys(patch).length === 0 ? undefined : patch;
}

function uniqueKeys(items: readonly Obj[], keyField: string): Map<Key, Obj> | null {
  const byKey = new Map<Key, Obj>();
  for (const item of items) {
    const key = item[keyField] as Key;
    if (byKey.has(key)) return null;
    byKey.set(key, item);
  }
  return byKey;
}

function diffList(prev: readonly Obj[], next: readonly Obj[], spec: ListSpec): ListPatch | undefined {
  if (prev === next) return undefined;
  const prevByKey = uniqueKeys(prev, spec.keyField);
  const nextByKey = uniqueKeys(next, spec.keyField);
  if (prevByKey === null || nextByKey === null) return jsonEqual(prev, next) ? undefined : { all: [...next] };
  const out: ListPatch = {};
  const sameKeys = prev.length === next.length && next.every((item, i) => item[spec.keyField] === prev[i]![spec.keyField]);
  if (!sameKeys) out.order = next.map((item) => item[spec.keyField] as Key);
  for (const item of next) {
    const key = item[spec.keyField] as Key;
    const before = prevByKey.get(key);
    if (before === undefined) {
      (out.add ??= []).push(item);
      continue;
    }
    const p = diffObject(before, item, spec.item, spec.keyField);
    if (p) (out.patch ??= []).push({ key, ...p });
  }
  return Object.keys(out).length === 0 ? undefined : out;
}

function diffRecord(prev: Obj, next: Obj): RecordPatch | undefined {
  if (prev === next) return undefined;
  let set: Obj | undefined;
  let unset: string[] | undefined;
  for (const key of Object.keys(next)) {
    const value = next[key];
    if (value === undefined) continue;
    const before = own(prev, key);
    if (before === undefined || !jsonEqual(before, value)) assignOwn((set ??= {}), key, value);
  }
  for (const key of Object.keys(prev)) if (prev[key] !== undefined && own(next, key) === undefined) (unset ??= []).push(key);
  if (!set && !unset) return undefined;
  return { ...(set ? { set } : {}), ...(unset ? { unset } : {}) };
}

// ── apply (the decoder's side; the patch was checked by the wire schema) ──

/**
 * `prev` with `patch` applied, as new objects along the changed paths only:
 * everything the patch does not touch is the very object `prev` held.
 * Never mutates `prev`; throws DeltaApplyError (naming the path) when the patch
 * does not fit it, so a caller that catches has applied nothing.
 */
export function applyObject(prev: Obj, patch: Obj, spec: ObjectSpec, where: string): Obj {
  const out: Obj = { ...prev };
  const set = patch.set as Obj | undefined;
  if (set) {
    for (const key of Object.keys(set)) {
      // `undefined` is "not sent" (JSON cannot carry it; structured clone can)
      if (set[key] !== undefined) assignOwn(out, key, set[key]);
    }
  }
  for (const key of (patch.unset as string[] | undefined) ?? []) delete out[key];
  for (const [field, list] of Object.entries(spec.lists ?? {})) {
    const p = patch[field] as ListPatch | undefined;
    if (p) out[field] = applyList(prev[field] as Obj[], p, list, where === '' ? field : `${where}.${field}`);
  }
  for (const field of spec.records ?? []) {
    const p = patch[field] as RecordPatch | undefined;
    if (p) out[field] = applyRecord(prev[field] as Obj, p);
  }
  return out;
}

function applyList(prev: readonly Obj[], patch: ListPatch, spec: ListSpec, where: string): Obj[] {
  if (!Array.isArray(prev)) throw new DeltaApplyError(where, 'is not a list in the state held');
  if (patch.all) {
    if (patch.order || patch.add || patch.patch) throw new DeltaApplyError(where, '`all` replaces the list and comes alone');
    return patch.all;
  }
  const prevByKey = uniqueKeys(prev, spec.keyField);
  if (prevByKey === null) throw new DeltaApplyError(where, 'the list held has repeated keys: it can only be replaced whole');
  const added = new Map<Key, Obj>();
  for (const item of patch.add ?? []) {
    const key = item[spec.keyField] as Key;
    if (prevByKey.has(key) || added.has(key)) throw new DeltaApplyError(`${where}[${String(key)}]`, 'added, but it is already there');
    added.set(key, item);
  }
  const patched = new Map<Key, Obj>();
  for (const p of patch.patch ?? []) {
    if (patched.has(p.key)) throw new DeltaApplyError(`${where}[${String(p.key)}]`, 'patched twice');
    patched.set(p.key, p);
  }
  const order = patch.order ?? prev.map((item) => item[spec.keyField] as Key);
  if (new Set(order).size !== order.length) throw new DeltaApplyError(where, '`order` repeats a key');
  if (!patch.order && added.size > 0) throw new DeltaApplyError(where, 'items added without the new `order`');
  let same = order.length === prev.length;
  const out = order.map((key, i) => {
    const itemWhere = `${where}[${String(key)}]`;
    const base = prevByKey.get(key);
    const fresh = added.get(key);
    if (fresh !== undefined) {
      if (patched.has(key)) throw new DeltaApplyError(itemWhere, 'added and patched at once');
      same = false;
      return fresh;
    }
    if (base === undefined) throw new DeltaApplyError(itemWhere, 'is neither in the state held nor added');
    const p = patched.get(key);
    const item = p === undefined ? base : applyObject(base, p, spec.item, itemWhere);
    if (item !== prev[i]) same = false;
    return item;
  });
  const orderSet = new Set(order);
  for (const key of patched.keys()) if (!orderSet.has(key)) throw new DeltaApplyError(`${where}[${String(key)}]`, 'patched, but not in the list');
  for (const key of added.keys()) if (!orderSet.has(key)) throw new DeltaApplyError(`${where}[${String(key)}]`, 'added, but not in `order`');
  return same ? (prev as Obj[]) : out;
}

function applyRecord(prev: Obj, patch: RecordPatch): Obj {
  const out: Obj = { ...prev };
  for (const key of Object.keys(patch.set ?? {})) {
    const value = own(patch.set!, key);
    if (value !== undefined) assignOwn(out, key, value);
  }
  for (const key of patch.unset ?? []) delete out[key];
  return out;
}

/** `obj[key]` if it is the object's own (a record key such as `__proto__` must not reach the prototype). */
function own(obj: Obj, key: string): unknown {
  return Object.prototype.hasOwnProperty.call(obj, key) ? obj[key] : undefined;
}

/** `obj[key] = value` that makes an own property even for `__proto__` (record keys come from the wire). */
function assignOwn(obj: Obj, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}
