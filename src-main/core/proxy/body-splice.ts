// The served model's name put into a request body as the client sent it: the
// value of its one top-level `model` member is replaced in the bytes, so an
// alias costs no parse-and-serialise of the whole body (long prompts). Any body
// it cannot be sure of (the key twice, an escaped key) is left to the rewrite.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const MODEL_KEY = Buffer.from('model');

const isSpace = (b: number | undefined) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;

/**
 * `raw` (a body already parsed as a JSON object naming a string model) with that model replaced by
 * `model`, JSON-escaped; null when the top-level `model` key is absent, written with escapes or
 * present more than once, so the caller re-serialises instead.
 */
export function spliceModel(raw: Buffer, model: string): Buffer | null {
  let i = skipSpace(raw, 0);
  if (raw[i] !== 0x7b) return null; // '{'
  i = skipSpace(raw, i + 1);
  let span: { from: number; to: number } | null = null;
  while (i < raw.length && raw[i] === QUOTE) {
    const keyEnd = stringEnd(raw, i + 1);
    if (keyEnd < 0) return null;
    const key = raw.subarray(i + 1, keyEnd - 1);
    const isModel = key.equals(MODEL_KEY);
    // A key with escapes may spell "model" too (`"mod\u0065l"`): too unsure to splice.
    if (!isModel && key.includes(BACKSLASH)) return null;
    i = skipSpace(raw, keyEnd);
    if (raw[i] !== 0x3a) return null; // ':'
    const from = skipSpace(raw, i + 1);
    const to = valueEnd(raw, from);
    if (to < 0) return null;
    if (isModel) {
      if (span !== null || raw[from] !== QUOTE) return null;
      span = { from, to };
    }
    i = skipSpace(raw, to);
    if (raw[i] === 0x2c) i = skipSpace(raw, i + 1); // ','
    else break;
  }
  if (span === null) return null;
  return Buffer.concat([raw.subarray(0, span.from), Buffer.from(JSON.stringify(model)), raw.subarray(span.to)]);
}

function skipSpace(raw: Buffer, i: number): number {
  while (isSpace(raw[i])) i++;
  return i;
}

/** Just past the closing quote of a string whose contents start at `i`; -1 when it never closes. */
function stringEnd(raw: Buffer, i: number): number {
  for (;;) {
    const q = raw.indexOf(QUOTE, i);
    if (q < 0) return -1;
    let slashes = 0;
    while (raw[q - 1 - slashes] === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return q + 1;
    i = q + 1;
  }
}

/** Just past the JSON value starting at `i` (strings and nesting followed, the rest to its delimiter); -1 when cut short. */
function valueEnd(raw: Buffer, i: number): number {
  const first = raw[i];
  if (first === QUOTE) return stringEnd(raw, i + 1);
  if (first !== 0x7b && first !== 0x5b) {
    while (i < raw.length && raw[i] !== 0x2c && raw[i] !== 0x7d && raw[i] !== 0x5d && !isSpace(raw[i])) i++;
    return i;
  }
  let depth = 0;
  while (i < raw.length) {
    const b = raw[i]!;
    if (b === QUOTE) {
      i = stringEnd(raw, i + 1);
      if (i < 0) return -1;
      continue;
    }
    if (b === 0x7b || b === 0x5b) depth++;
    else if ((b === 0x7d || b === 0x5d) && --depth === 0) return i + 1;
    i++;
  }
  return -1;
}
