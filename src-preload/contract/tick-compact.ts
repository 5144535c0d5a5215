import { z } from 'zod';
import { DeltaApplyError, jsonEqual, type ObjectSpec } from './delta.js';

// The compact form of a delta (tick-codec.ts): most of a tick is numbers that
// moved in fields both sides already hold, and their names cost more than the
// numbers (`"gpu.3.power_w":520.08`). Both ends hold the same state, so a
// changed number is sent by its field's position among the held object's (sorted) keys,
// and a whole-number field (a timestamp, a counter) as the difference from the
// held value; a nested object (a figure's `source`, a probe) sends only its
// changed fields the same way. Lossless: the decoder expands the compact parts
// back into the named patch against the state it holds, and that patch is then
// checked by the wire schema and applied as before.
//
// Parts, beside an object patch's `set` (and a record patch's):
// (each position after a part's first is the distance from the one before, in position order)
//   n: [position, value, …]   a number field that holds a number
//   d: [position, change, …]  a whole-number field: held + change (both safe integers)
//   o: [position, sub, …]     a plain object field: sub = { s?: {field: value}, u?: [field], n?, d?, o? }
// and beside a keyed list's `patch`, for items whose change is numbers alone:
//   n, d: [item position in the held list, field position, value, …]

type Obj = Record<string, unknown>;
type Key = string | number;

/** The compact parts as the wire schemas admit them (their fit to the state held is checked on expansion). */
export const compactWireParts = {
  n: z.array(z.number()).optional(),
  d: z.array(z.number().int()).optional(),
  o: z.array(z.unknown()).optional(),
};

/** The compact parts could not be read (not pairs, a position that is no integer): the event is invalid. */
export class CompactShapeError extends Error {
  constructor(where: string, message: string) {
    super(`${where}: ${message}`);
    this.name = 'CompactShapeError';
  }
}

const isPlain = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const own = (o: Obj, k: string): unknown => (Object.prototype.hasOwnProperty.call(o, k) ? o[k] : undefined);

/** `o[key] = value` as an own property even for `__proto__` (record keys come from the wire). */
function assignOwn(o: Obj, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
  else o[key] = value;
}

/** An object's field order for positions: its keys sorted, and a field's position among them. */
interface Layout {
  readonly keys: readonly string[];
  position(key: string): number;
}

// Objects of one kind (a GPU, a host's values) share their keys from tick to tick: their layout is kept.
const layouts = new Map<string, Layout>();
const LAYOUTS_MAX = 512;

/**
 * The keys positions count over, sorted: those holding a value (JSON drops
 * `undefined`; structured clone keeps it). Sorted because the two ends hold
 * equal objects but not always in the same key order (a parse puts an added
 * item's fields in its schema's order, a record keeps the order they came in).
 */
function layoutOf(o: Obj): Layout {
  const present: string[] = [];
  for (const k of Object.keys(o)) if (o[k] !== undefined) present.push(k);
  const signature = present.join('\u0000');
  let layout = layouts.get(signature);
  if (layout === undefined) {
    const keys = present.sort();
    const map = new Map(keys.map((k, i) => [k, i]));
    layout = { keys, position: (key) => map.get(key) ?? -1 };
    if (layouts.size >= LAYOUTS_MAX) layouts.clear();
    layouts.set(signature, layout);
  }
  return layout;
}

const digits = (n: number): number => String(n).length;

/** Numbers and nested objects of `set` that `base` already holds move to n/d/o; what stays is named. */
function compactSet(set: Obj, base: Obj, out: Obj, setField: 's' | 'set'): void {
  const pos = layoutOf(base).position;
  const named: Obj = {};
  const n: unknown[] = [];
  const d: unknown[] = [];
  const o: unknown[] = [];
  let kept = 0;
  for (const key of Object.keys(set)) {
    const value = set[key];
    if (value === undefined) continue;
    const at = pos(key);
    const held = at < 0 ? undefined : own(base, key);
    if (typeof held === 'number' && typeof value === 'number') {
      const change = value - held;
      if (Number.isSafeInteger(held) && Number.isSafeInteger(value) && Number.isSafeInteger(change) && digits(change) < digits(value)) d.push(at, change);
      else n.push(at, value);
    } else if (isPlain(held) && isPlain(value)) {
      o.push(at, compactPlain(held, value));
    } else {
      assignOwn(named, key, value);
      kept++;
    }
  }
  if (kept > 0) out[setField] = named;
  if (n.length > 0) out.n = gapped(n);
  if (d.length > 0) out.d = gapped(d);
  if (o.length > 0) out.o = gapped(o);
}

/** Pairs in position order, each position after the first as its distance from the one before (shorter in a record of 150 figures). */
function gapped(pairs: unknown[]): unknown[] {
  const order: Array<[number, unknown]> = [];
  for (let i = 0; i < pairs.length; i += 2) order.push([pairs[i] as number, pairs[i + 1]]);
  order.sort((a, b) => a[0] - b[0]);
  const out: unknown[] = [];
  let last = 0;
  for (const [at, value] of order) {
    out.push(at - last, value);
    last = at;
  }
  return out;
}

/** Positions back from `gapped`'s distances; a distance that is no whole number ≥ 0 cannot be read. */
function ungapped(pairs: unknown[], where: string, part: string): number[] {
  const out: number[] = [];
  let at = 0;
  for (let i = 0; i < pairs.length; i += 2) {
    const gap = pairs[i];
    if (typeof gap !== 'number' || !Number.isInteger(gap) || gap < 0) throw new CompactShapeError(where, `\`${part}\` names position ${String(gap)}`);
    out.push((at += gap));
  }
  return out;
}

/** A nested object's change as a sub-patch (fields set, removed, numbers and objects by position). */
function compactPlain(held: Obj, value: Obj): Obj {
  const set: Obj = {};
  for (const key of Object.keys(value)) {
    const v = value[key];
    if (v !== undefined && !jsonEqual(own(held, key), v)) assignOwn(set, key, v);
  }
  const sub: Obj = {};
  compactSet(set, held, sub, 's');
  const u = layoutOf(held).keys.filter((k) => own(value, k) === undefined);
  if (u.length > 0) sub.u = u;
  return sub;
}

/** The wire form of a named object patch, against the object the decoder holds. */
export function compactPatch(patch: Obj, base: Obj, spec: ObjectSpec): Obj {
  const out: Obj = {};
  for (const key of Object.keys(patch)) {
    const value = patch[key];
    if (key === 'set') compactSet(value as Obj, base, out, 'set');
    else if (spec.lists?.[key] !== undefined) out[key] = compactList(value as Obj, base[key] as Obj[], spec.lists[key]);
    else if (spec.records?.includes(key) === true && isPlain((value as Obj).set)) {
      const { set, ...rest } = value as Obj;
      const record: Obj = { ...rest };
      compactSet(set as Obj, base[key] as Obj, record, 'set');
      out[key] = record;
    } else out[key] = value;
  }
  return out;
}

function compactList(patch: Obj, base: readonly Obj[], spec: { keyField: string; item: ObjectSpec }): Obj {
  const items = patch.patch as Array<Obj & { key: Key }> | undefined;
  if (items === undefined) return patch;
  const at = new Map(base.map((item, i) => [item[spec.keyField] as Key, i]));
  const kept: Obj[] = [];
  const n: number[] = [];
  const d: number[] = [];
  for (const p of items) {
    const i = at.get(p.key)!;
    const item = compactPatch(withoutKey(p), base[i]!, spec.item);
    // An item whose change is numbers alone joins the list's triples: no wrapper, no key, per item.
    if (Object.keys(item).every((k) => k === 'n' || k === 'd')) {
      for (const [part, into] of [['n', n], ['d', d]] as const) {
        const pairs = (item[part] as number[] | undefined) ?? [];
        for (let j = 0; j < pairs.length; j += 2) into.push(i, pairs[j]!, pairs[j + 1]!);
      }
    } else kept.push({ key: p.key, ...item });
  }
  const { patch: _patch, ...rest } = patch;
  return { ...rest, ...(kept.length > 0 ? { patch: kept } : {}), ...(n.length > 0 ? { n } : {}), ...(d.length > 0 ? { d } : {}) };
}

function withoutKey(p: Obj): Obj {
  const { key: _key, ...rest } = p;
  return rest;
}

// ── expand (the decoder's side, on a payload not yet checked) ─────────────

function pairs(raw: unknown, where: string, part: string): unknown[] {
  if (!Array.isArray(raw) || raw.length % 2 !== 0) throw new CompactShapeError(where, `\`${part}\` is not a list of position, value pairs`);
  return raw;
}

/** `set` (named) with the compact parts of `patch` written back into it by name. */
function expandSet(patch: Obj, base: unknown, where: string, setField: 's' | 'set'): Obj | undefined {
  const named = patch[setField];
  if (patch.n === undefined && patch.d === undefined && patch.o === undefined) return named as Obj | undefined;
  if (!isPlain(base)) throw new DeltaApplyError(where, 'numbers by position for a field the state held does not have as an object');
  if (named !== undefined && !isPlain(named)) throw new CompactShapeError(where, `\`${setField}\` is not an object`);
  const { keys } = layoutOf(base);
  const set: Obj = { ...(named ?? {}) };
  const field = (at: number, part: string): string => {
    const key = keys[at];
    if (key === undefined) throw new DeltaApplyError(where, `\`${part}\` names position ${at}, but the object held has ${keys.length} fields`);
    if (Object.prototype.hasOwnProperty.call(set, key)) throw new DeltaApplyError(`${where}.${key}`, 'set twice');
    return key;
  };
  const n = patch.n === undefined ? [] : pairs(patch.n, where, 'n');
  const nAt = ungapped(n, where, 'n');
  for (let i = 0; i < n.length; i += 2) assignOwn(set, field(nAt[i / 2]!, 'n'), n[i + 1]);
  const d = patch.d === undefined ? [] : pairs(patch.d, where, 'd');
  const dAt = ungapped(d, where, 'd');
  for (let i = 0; i < d.length; i += 2) {
    const key = field(dAt[i / 2]!, 'd');
    const held = own(base, key);
    const change = d[i + 1];
    const value = typeof held === 'number' && typeof change === 'number' ? held + change : Number.NaN;
    if (!Number.isSafeInteger(held) || !Number.isSafeInteger(change) || !Number.isSafeInteger(value)) throw new DeltaApplyError(`${where}.${key}`, 'a change to a field that holds no whole number');
    assignOwn(set, key, value);
  }
  const o = patch.o === undefined ? [] : pairs(patch.o, where, 'o');
  const oAt = ungapped(o, where, 'o');
  for (let i = 0; i < o.length; i += 2) {
    const key = field(oAt[i / 2]!, 'o');
    assignOwn(set, key, expandPlain(own(base, key), o[i + 1], `${where}.${key}`));
  }
  return set;
}

function expandPlain(held: unknown, sub: unknown, where: string): Obj {
  if (!isPlain(held)) throw new DeltaApplyError(where, 'patched by field, but the state held has no object there');
  if (!isPlain(sub)) throw new CompactShapeError(where, 'the sub-patch is not an object');
  const out: Obj = { ...held };
  for (const k of Object.keys(out)) if (out[k] === undefined) delete out[k];
  const set = expandSet(sub, held, where, 's');
  if (set !== undefined && !isPlain(set)) throw new CompactShapeError(where, '`s` is not an object');
  for (const key of Object.keys(set ?? {})) assignOwn(out, key, set![key]);
  if (sub.u !== undefined) {
    if (!Array.isArray(sub.u)) throw new CompactShapeError(where, '`u` is not a list');
    for (const key of sub.u) {
      if (typeof key !== 'string' || own(out, key) === undefined) throw new DeltaApplyError(where, `removes ${String(key)}, which the state held does not have`);
      delete out[key];
    }
  }
  return out;
}

/**
 * The named patch a compact one stands for, against the object held. Parts it
 * does not know are passed on for the wire schema to judge; a list item it
 * cannot find in the state held is passed on too (apply reports it).
 */
export function expandPatch(patch: unknown, base: unknown, spec: ObjectSpec, where: string): unknown {
  if (!isPlain(patch) || !isPlain(base)) return patch;
  const out: Obj = {};
  for (const key of Object.keys(patch)) {
    if (key === 'n' || key === 'd' || key === 'o') continue;
    const value = patch[key];
    const path = where === '' ? key : `${where}.${key}`;
    if (spec.lists?.[key] !== undefined) out[key] = expandList(value, base[key], spec.lists[key], path);
    else if (spec.records?.includes(key) === true && isPlain(value)) out[key] = expandRecord(value, base[key], path);
    else out[key] = value;
  }
  const set = expandSet(patch, base, where, 'set');
  if (set !== undefined) out.set = set;
  return out;
}

function expandRecord(patch: Obj, base: unknown, where: string): Obj {
  const { n: _n, d: _d, o: _o, ...rest } = patch;
  const set = expandSet(patch, base, where, 'set');
  return set === undefined ? rest : { ...rest, set };
}

function expandList(patch: unknown, base: unknown, spec: { keyField: string; item: ObjectSpec }, where: string): unknown {
  if (!isPlain(patch) || !Array.isArray(base)) return patch;
  const { n, d, ...rest } = patch;
  if (n === undefined && d === undefined && !Array.isArray(rest.patch)) return patch;
  const byKey = new Map<unknown, unknown>();
  for (const item of base as unknown[]) if (isPlain(item)) byKey.set(item[spec.keyField], item);
  const items: unknown[] = Array.isArray(rest.patch) ? [...(rest.patch as unknown[])] : [];
  items.push(...itemsOfTriples(n, d, base as unknown[], spec.keyField, where));
  const expanded = items.map((p: unknown) => {
    if (!isPlain(p)) return p;
    const held = byKey.get(p.key);
    if (held === undefined) return p;
    return { key: p.key, ...(expandPatch(withoutKey(p), held, spec.item, `${where}[${String(p.key)}]`) as Obj) };
  });
  return expanded.length > 0 ? { ...rest, patch: expanded } : rest;
}

/** A list's triples (item position, field position, value) as item patches of pairs, keyed by the held items' keys. */
function itemsOfTriples(n: unknown, d: unknown, base: readonly unknown[], keyField: string, where: string): Obj[] {
  const byPosition = new Map<number, Obj & { n: unknown[]; d: unknown[] }>();
  for (const [part, raw] of [['n', n], ['d', d]] as const) {
    if (raw === undefined) continue;
    if (!Array.isArray(raw) || raw.length % 3 !== 0) throw new CompactShapeError(where, `\`${part}\` is not a list of item, position, value triples`);
    for (let i = 0; i < raw.length; i += 3) {
      const at: unknown = raw[i];
      if (typeof at !== 'number' || !Number.isInteger(at) || at < 0) throw new CompactShapeError(where, `\`${part}\` names item ${String(at)}`);
      const held = base[at];
      if (!isPlain(held)) throw new DeltaApplyError(where, `\`${part}\` names item ${at}, but the list held has ${base.length}`);
      let item = byPosition.get(at);
      if (item === undefined) byPosition.set(at, (item = { key: held[keyField], n: [], d: [] }));
      item[part].push(raw[i + 1], raw[i + 2]);
    }
  }
  return [...byPosition.values()].map(({ key, n: ns, d: ds }) => ({ key, ...(ns.length > 0 ? { n: ns } : {}), ...(ds.length > 0 ? { d: ds } : {}) }));
}
