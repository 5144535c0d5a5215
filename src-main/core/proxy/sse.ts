// Streaming pass-through of an upstream SSE body, as bytes: complete events
// are handed on as soon as they arrive (a partial event waits only for its own
// end) as slices of the buffers received, and only what accounting needs is
// decoded: the usage chunk (read, and removed again with the `"usage":null`
// fields it caused when the proxy itself asked for usage) and an error event.

export interface Usage {
  promptTokens: number | null;
  completionTokens: number | null;
}

/**
 * Longest partial event held while waiting for its end (bytes). An upstream that never ends an
 * event would otherwise grow the held bytes without limit; past this, they are passed on as they
 * came, unread (a real event — a chunk, the usage line — is a few kilobytes).
 */
export const MAX_PENDING_EVENT_BYTES = 1 << 20;

const LF = 0x0a;
const CR = 0x0d;
const COMMA = 0x2c;
const BRACE = 0x7b;
const SPACE = 0x20;
const EMPTY = Buffer.alloc(0);
const USAGE_FIELD = '"usage":';
/** usageCursor before the text was searched. */
const UNSEARCHED = -2;

const isBlank = (c: number) => c === SPACE || c === 0x09 || c === LF || c === CR;

/**
 * Searches run on a latin1 view of the bytes (one character per byte, so positions are byte
 * offsets): V8's string search, one per needle per read, where a Buffer.indexOf per event and
 * needle cost a native call each (~0.5 µs, 45 of them a streamed answer).
 */
export class SseRelay {
  /** Bytes of an event whose end has not come yet. */
  private pending: Buffer = EMPTY;
  /** What push() hands on once an event changed: the runs of the read kept so far, as latin1 text. */
  private edited: string | null = null;
  private runStart = 0;
  /** The next `"usage":` in the text at hand at or after the last place asked; -1: none left. */
  private usageCursor = UNSEARCHED;
  usage: Usage | null = null;
  /** Data events seen (not counting [DONE]). */
  events = 0;
  sawDone = false;
  /** The upstream ended its answer with an error event (llama-server: `data: {"error":{…}}`, no [DONE]): its message. */
  errorEvent: string | null = null;
  /** Times a partial event outgrew MAX_PENDING_EVENT_BYTES and was passed on unread. */
  oversized = 0;

  constructor(private readonly stripUsage: boolean) {}

  /** Returns the bytes to forward now (empty when the chunk ended mid-event); unchanged events are the received bytes. */
  push(chunk: Buffer): Buffer {
    const data = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    const text = data.toString('latin1');
    this.runStart = 0;
    this.usageCursor = UNSEARCHED;
    let start = 0;
    for (;;) {
      const at = findSeparator(text, start);
      if (at < 0) break;
      const end = at + separatorLength(text, at);
      this.relay(data, text, start, at, end);
      start = end;
    }
    let end = start;
    if (data.length - start > MAX_PENDING_EVENT_BYTES) {
      end = data.length;
      this.oversized++;
    }
    this.pending = end < data.length ? data.subarray(end) : EMPTY;
    return this.take(data, text, end);
  }

  /** Bytes of a partial event held (at most MAX_PENDING_EVENT_BYTES). */
  get pendingBytes(): number {
    return this.pending.length;
  }

  /** Whatever is left at the end of the body. */
  end(): Buffer {
    const rest = this.pending;
    this.pending = EMPTY;
    if (rest.length === 0) return EMPTY;
    this.runStart = 0;
    this.usageCursor = UNSEARCHED;
    const text = rest.toString('latin1');
    this.relay(rest, text, 0, rest.length, rest.length);
    return this.take(rest, text, rest.length);
  }

  /**
   * The read up to `end` after the cuts made: the received buffer itself (or a slice of it) when
   * nothing changed, else the kept runs joined (string slices and one copy back to bytes).
   */
  private take(data: Buffer, text: string, end: number): Buffer {
    const edited = this.edited;
    if (edited === null) return this.runStart === 0 && end === data.length ? data : data.subarray(this.runStart, end);
    this.edited = null;
    return Buffer.from(edited + text.slice(this.runStart, end), 'latin1');
  }

  /** Replaces [from, to) of the read in the output with `insert` (latin1 text of its bytes; nothing when absent). */
  private cut(text: string, from: number, to: number, insert = ''): void {
    this.edited = (this.edited ?? '') + text.slice(this.runStart, from) + insert;
    this.runStart = to;
  }

  /** The first `"usage":` at or after `from`, or -1; each occurrence is searched for once per read. */
  private nextUsage(text: string, from: number): number {
    let u = this.usageCursor;
    if (u === -1) return -1;
    if (u < from) this.usageCursor = u = text.indexOf(USAGE_FIELD, from);
    return u;
  }

  /** One event: [start, at) is the event, [at, end) its separator. */
  private relay(data: Buffer, text: string, start: number, at: number, end: number): void {
    let dataAt = start;
    if (!text.startsWith('data:', start)) {
      const i = text.indexOf('\ndata:', start);
      if (i < 0 || i >= at) return;
      dataAt = i + 1;
    }
    let p = dataAt + 5;
    while (p < at && isBlank(text.charCodeAt(p))) p++;
    if (text.startsWith('[DONE]', p)) {
      this.sawDone = true;
      return;
    }
    this.events++;
    if (text.startsWith('{"error"', p)) {
      // Relayed as it came (openai-node raises it as an APIError); noted for the request's row.
      const parsed = parseChunk(data.toString('utf8', p, at)) as { error?: { message?: unknown } | string } | null;
      const e = parsed?.error;
      this.errorEvent = typeof e === 'string' ? e : typeof e?.message === 'string' ? e.message : 'error event';
      return;
    }
    const first = this.nextUsage(text, p);
    if (first < 0 || first >= at) return;
    let nulls = false;
    for (let u = first; u >= 0 && u < at; u = this.nextUsage(text, u + USAGE_FIELD.length)) {
      const c = text.charCodeAt(u + USAGE_FIELD.length);
      if (c === BRACE || (c === SPACE && text.charCodeAt(u + USAGE_FIELD.length + 1) === BRACE)) {
        this.usageEvent(data, text, start, dataAt, p, at, end);
        return;
      }
      if (text.startsWith('null', u + USAGE_FIELD.length)) nulls = true;
    }
    if (nulls && this.stripUsage) this.dropUsageNulls(text, start, first, at);
  }

  /** The usage chunk: read for accounting; when the proxy asked for it, removed (or its usage member dropped). */
  private usageEvent(data: Buffer, text: string, start: number, dataAt: number, payloadAt: number, at: number, end: number): void {
    const parsed = parseChunk(data.toString('utf8', payloadAt, at));
    if (!parsed?.usage) return;
    this.usage = {
      promptTokens: typeof parsed.usage.prompt_tokens === 'number' ? parsed.usage.prompt_tokens : null,
      completionTokens: typeof parsed.usage.completion_tokens === 'number' ? parsed.usage.completion_tokens : null,
    };
    if (!this.stripUsage) return;
    if (Array.isArray(parsed.choices) && parsed.choices.length === 0) {
      this.cut(text, start, end);
      return;
    }
    delete parsed.usage;
    // The lines before `data:` (an id, an event name) and the separator stay as they came.
    this.cut(text, dataAt, at, Buffer.from('data: ' + JSON.stringify(parsed)).toString('latin1'));
  }

  /** Every `,"usage":null` (or `"usage":null` and the comma after it) the proxy's include_usage caused. */
  private dropUsageNulls(text: string, start: number, first: number, at: number): void {
    let floor = start;
    for (let u = first; u >= 0 && u < at; u = text.indexOf(USAGE_FIELD, floor)) {
      const after = u + USAGE_FIELD.length;
      if (!text.startsWith('null', after)) {
        floor = after;
        continue;
      }
      let from = u;
      let to = after + 4;
      if (u - 1 >= floor && text.charCodeAt(u - 1) === COMMA) from = u - 1;
      else if (text.charCodeAt(to) === COMMA && to < at) to++;
      this.cut(text, from, to);
      floor = to;
    }
  }
}

/** Where the first event separator (`\r?\n\r?\n`) at or after `from` starts; -1 when none. */
function findSeparator(text: string, from: number): number {
  let i = text.indexOf('\n', from);
  while (i >= 0) {
    const next = text.charCodeAt(i + 1);
    if (next === LF || (next === CR && text.charCodeAt(i + 2) === LF)) return i > from && text.charCodeAt(i - 1) === CR ? i - 1 : i;
    i = text.indexOf('\n', i + 1);
  }
  return -1;
}

/** Length of the separator found at `at`: `\n\n`, `\r\n\n`, `\n\r\n` or `\r\n\r\n`. */
function separatorLength(text: string, at: number): number {
  let n = text.charCodeAt(at) === CR ? 2 : 1;
  n += text.charCodeAt(at + n) === CR ? 2 : 1;
  return n;
}

const INCLUDE_USAGE = Buffer.from('{"stream_options":{"include_usage":true},');

/**
 * The request body with `stream_options.include_usage` added, without
 * re-serialising it. Only for a body already parsed as a JSON object with at
 * least one member and no `stream_options`: the new member goes right after
 * the opening brace.
 */
export function withIncludeUsage(body: Buffer): Buffer {
  const open = body.indexOf(0x7b);
  return Buffer.concat([INCLUDE_USAGE, body.subarray(open + 1)]);
}

const USAGE_KEY = Buffer.from('"usage"');

/**
 * Usage from a complete (non-streaming) JSON answer; null when it has none.
 * Reads only the object after the last `"usage"` key (OpenAI-style answers put
 * it after the choices) instead of parsing the whole answer; anything it does
 * not recognise there falls back to the full parse.
 */
export function usageFromBody(body: Buffer): Usage | null {
  const at = body.lastIndexOf(USAGE_KEY);
  if (at < 0) return null;
  const object = objectAfterKey(body, at + USAGE_KEY.length);
  if (object) {
    try {
      const usage = toUsage(JSON.parse(object) as unknown);
      if (usage && (usage.promptTokens !== null || usage.completionTokens !== null)) return usage;
    } catch {
      // not what it looked like: parse the whole answer
    }
  }
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { usage?: unknown };
    return parsed.usage ? toUsage(parsed.usage) : null;
  } catch {
    return null;
  }
}

function toUsage(value: unknown): Usage | null {
  if (typeof value !== 'object' || value === null) return null;
  const u = value as { prompt_tokens?: unknown; completion_tokens?: unknown };
  return {
    promptTokens: typeof u.prompt_tokens === 'number' ? u.prompt_tokens : null,
    completionTokens: typeof u.completion_tokens === 'number' ? u.completion_tokens : null,
  };
}

const isSpace = (b: number | undefined) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;

/** The text of the `{…}` value after a key that ends at `from` (`: {…}`), or null. */
function objectAfterKey(body: Buffer, from: number): string | null {
  let i = from;
  while (isSpace(body[i])) i++;
  if (body[i] !== 0x3a) return null; // ':'
  i++;
  while (isSpace(body[i])) i++;
  if (body[i] !== 0x7b) return null; // '{'
  const start = i;
  let depth = 0;
  let inString = false;
  for (; i < body.length; i++) {
    const b = body[i];
    if (inString) {
      if (b === 0x5c) i++; // backslash: skip the escaped byte
      else if (b === 0x22) inString = false;
    } else if (b === 0x22) inString = true;
    else if (b === 0x7b) depth++;
    else if (b === 0x7d && --depth === 0) return body.toString('utf8', start, i + 1);
  }
  return null;
}

interface ChunkWithUsage {
  usage?: { prompt_tokens?: unknown; completion_tokens?: unknown } | null;
  choices?: unknown;
}

function parseChunk(payload: string): ChunkWithUsage | null {
  try {
    const value = JSON.parse(payload) as unknown;
    return typeof value === 'object' && value !== null ? (value as ChunkWithUsage) : null;
  } catch {
    return null;
  }
}
