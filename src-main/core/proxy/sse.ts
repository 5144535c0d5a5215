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
const EMPTY = Buffer.alloc(0);
const DATA = Buffer.from('data:');
const NL_DATA = Buffer.from('\ndata:');
const DONE = Buffer.from('[DONE]');
const ERROR = Buffer.from('{"error"');
const USAGE_OBJECT = Buffer.from('"usage":{');
const USAGE_OBJECT_SPACED = Buffer.from('"usage": {');
const USAGE_NULL = Buffer.from('"usage":null');
const COMMA = 0x2c;

const isBlank = (b: number | undefined) => b === 0x20 || b === 0x09 || b === LF || b === CR;

export class SseRelay {
  /** Bytes of an event whose end has not come yet. */
  private pending: Buffer = EMPTY;
  /** What push() hands on: runs of the received bytes, cut where an event changes. */
  private parts: Buffer[] = [];
  private runStart = 0;
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
    this.runStart = 0;
    let start = 0;
    for (;;) {
      const sep = findSeparator(data, start);
      if (sep === null) break;
      this.relay(data, start, sep.at, sep.end);
      start = sep.end;
    }
    let end = start;
    if (data.length - start > MAX_PENDING_EVENT_BYTES) {
      end = data.length;
      this.oversized++;
    }
    this.pending = end < data.length ? data.subarray(end) : EMPTY;
    return this.take(data, end);
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
    this.relay(rest, 0, rest.length, rest.length);
    return this.take(rest, rest.length);
  }

  /** The run of `data` up to `end` after the cuts made, as one buffer (the received one itself when nothing was cut). */
  private take(data: Buffer, end: number): Buffer {
    const parts = this.parts;
    if (parts.length === 0) return this.runStart === 0 && end === data.length ? data : data.subarray(this.runStart, end);
    if (end > this.runStart) parts.push(data.subarray(this.runStart, end));
    this.parts = [];
    return parts.length === 1 ? parts[0]! : Buffer.concat(parts);
  }

  /** Replaces data[from, to) in the output with `insert` (nothing when absent). */
  private cut(data: Buffer, from: number, to: number, insert?: Buffer): void {
    if (from > this.runStart) this.parts.push(data.subarray(this.runStart, from));
    if (insert !== undefined && insert.length > 0) this.parts.push(insert);
    this.runStart = to;
  }

  /** One event: data[start, at) is the event, data[at, end) its separator. */
  private relay(data: Buffer, start: number, at: number, end: number): void {
    const event = data.subarray(start, at);
    let dataAt = 0;
    if (!startsWith(event, 0, DATA)) {
      const i = event.indexOf(NL_DATA);
      if (i < 0) return;
      dataAt = i + 1;
    }
    let p = dataAt + DATA.length;
    while (p < event.length && isBlank(event[p])) p++;
    if (startsWith(event, p, DONE)) {
      this.sawDone = true;
      return;
    }
    this.events++;
    if (startsWith(event, p, ERROR)) {
      // Relayed as it came (openai-node raises it as an APIError); noted for the request's row.
      const parsed = parseChunk(event.toString('utf8', p)) as { error?: { message?: unknown } | string } | null;
      const e = parsed?.error;
      this.errorEvent = typeof e === 'string' ? e : typeof e?.message === 'string' ? e.message : 'error event';
      return;
    }
    if (event.indexOf(USAGE_OBJECT, p) >= 0 || event.indexOf(USAGE_OBJECT_SPACED, p) >= 0) {
      this.usageEvent(data, start, at, end, event, dataAt, p);
      return;
    }
    if (this.stripUsage) this.dropUsageNulls(data, start, event);
  }

  /** The usage chunk: read for accounting; when the proxy asked for it, removed (or its usage member dropped). */
  private usageEvent(data: Buffer, start: number, at: number, end: number, event: Buffer, dataAt: number, payloadAt: number): void {
    const parsed = parseChunk(event.toString('utf8', payloadAt));
    if (!parsed?.usage) return;
    this.usage = {
      promptTokens: typeof parsed.usage.prompt_tokens === 'number' ? parsed.usage.prompt_tokens : null,
      completionTokens: typeof parsed.usage.completion_tokens === 'number' ? parsed.usage.completion_tokens : null,
    };
    if (!this.stripUsage) return;
    if (Array.isArray(parsed.choices) && parsed.choices.length === 0) {
      this.cut(data, start, end);
      return;
    }
    delete parsed.usage;
    // The lines before `data:` (an id, an event name) and the separator stay as they came.
    this.cut(data, start + dataAt, at, Buffer.from('data: ' + JSON.stringify(parsed)));
  }

  /** Every `,"usage":null` (or `"usage":null` and the comma after it) the proxy's include_usage caused. */
  private dropUsageNulls(data: Buffer, start: number, event: Buffer): void {
    let from = 0;
    for (;;) {
      const i = event.indexOf(USAGE_NULL, from);
      if (i < 0) return;
      let cutFrom = i;
      let cutTo = i + USAGE_NULL.length;
      if (i - 1 >= from && event[i - 1] === COMMA) cutFrom = i - 1;
      else if (event[cutTo] === COMMA) cutTo++;
      this.cut(data, start + cutFrom, start + cutTo);
      from = cutTo;
    }
  }
}

/** The first event separator (`\r?\n\r?\n`) at or after `from`: where it starts and where it ends. */
function findSeparator(data: Buffer, from: number): { at: number; end: number } | null {
  let i = data.indexOf(LF, from);
  while (i >= 0) {
    const next = data[i + 1];
    let end = -1;
    if (next === LF) end = i + 2;
    else if (next === CR && data[i + 2] === LF) end = i + 3;
    if (end > 0) return { at: i > from && data[i - 1] === CR ? i - 1 : i, end };
    i = data.indexOf(LF, i + 1);
  }
  return null;
}

function startsWith(buf: Buffer, at: number, prefix: Buffer): boolean {
  if (buf.length - at < prefix.length) return false;
  for (let k = 0; k < prefix.length; k++) if (buf[at + k] !== prefix[k]) return false;
  return true;
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
