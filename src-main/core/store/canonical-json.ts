// The canonical JSON encoding the audit chain hashes. It must never change for
// rows already written, so it is defined here exactly and tested byte for byte.
//
//   - UTF-8 text, no whitespace outside strings.
//   - Object keys sorted by UTF-16 code units (JavaScript's default sort, as in
//     RFC 8785); each key appears once. Properties whose value is `undefined`
//     are omitted (as JSON.stringify does), so a parsed row re-encodes identically.
//   - Strings and numbers are written as JSON.stringify writes them (ECMAScript
//     Number::toString: shortest round-trip form, -0 as 0).
//   - Only null, booleans, finite numbers, strings, arrays and plain objects
//     (prototype Object.prototype or null) are allowed. NaN, ±Infinity, undefined
//     in arrays or at the top, bigint, functions, symbols, Dates, Maps, class
//     instances and cycles are refused with a TypeError naming the path.

export function canonicalJson(value: unknown): string {
  return encode(value, [], new Set());
}

/**
 * The path of the value being encoded, as segments pushed and popped on the way down; written
 * out ($.a[3].b) only for an error. Building it as a string for every element cost more than
 * the encoding itself for large arrays (an evidence report's charts: ~10⁵ numbers).
 */
type Path = (string | number)[];

function where(path: Path): string {
  let s = '$';
  for (const p of path) s += typeof p === 'number' ? `[${p}]` : `.${p}`;
  return s;
}

function encode(value: unknown, path: Path, seen: Set<object>): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'boolean':
      return value ? 'true' : 'false';
    case 'string':
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`${where(path)}: ${value} is not a finite number`);
      return JSON.stringify(value);
    case 'object':
      break;
    default:
      throw new TypeError(`${where(path)}: ${typeof value} cannot be encoded as JSON`);
  }
  const obj = value as object;
  if (seen.has(obj)) throw new TypeError(`${where(path)}: cycle`);
  seen.add(obj);
  try {
    if (Array.isArray(obj)) {
      let out = '[';
      for (let i = 0; i < obj.length; i++) {
        const item: unknown = obj[i];
        path.push(i);
        // a hole reads as undefined: refused like an explicit one
        if (item === undefined) throw new TypeError(`${where(path)}: undefined in an array`);
        out += i === 0 ? encode(item, path, seen) : `,${encode(item, path, seen)}`;
        path.pop();
      }
      return `${out}]`;
    }
    const proto = Object.getPrototypeOf(obj);
    if (proto !== Object.prototype && proto !== null) {
      const name = (obj as { constructor?: { name?: string } }).constructor?.name ?? 'object';
      throw new TypeError(`${where(path)}: ${name} is not a plain object`);
    }
    const record = obj as Record<string, unknown>;
    const keys = Object.keys(record).sort();
    let out = '{';
    for (const key of keys) {
      const v = record[key];
      if (v === undefined) continue;
      path.push(key);
      out += `${out.length > 1 ? ',' : ''}${JSON.stringify(key)}:${encode(v, path, seen)}`;
      path.pop();
    }
    return `${out}}`;
  } finally {
    seen.delete(obj);
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
