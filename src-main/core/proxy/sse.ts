// Streaming pass-through of an upstream SSE body: complete events are handed
// on as soon as they arrive (a partial event waits only for its own end), the
// usage chunk is read for accounting, and — when the proxy itself asked for
// usage — removed again together with the `"usage":null` fields it caused.
import { StringDecoder } from 'node:string_decoder';

export interface Usage {
  promptTokens: number | null;
  completionTokens: number | null;
}

const SEPARATOR = /\r?\n\r?\n/;
/**
 * Longest partial event held while waiting for its end (characters). An upstream that never ends an
 * event would otherwise grow the held text without limit; past this, it is passed on as it came,
 * unread (a real event — a chunk, the usage line — is a few kilobytes).
 */
export const MAX_PENDING_EVENT_CHARS = 1 << 20;

export class SseRelay {
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';
  usage: Usage | null = null;
  /** Data events seen (not counting [DONE]). */
  events = 0;
  sawDone = false;
  /** The upstream ended its answer with an error event (llama-server: `data: {"error":{…}}`, no [DONE]): its message. */
  errorEvent: string | null = null;
  /** Times a partial event outgrew MAX_PENDING_EVENT_CHARS and was passed on unread. */
  oversized = 0;

  constructor(private readonly stripUsage: boolean) {}

  /** Returns the text to forward now ('' when the chunk ended mid-event). */
  push(chunk: Buffer): string {
    const text = this.pending + this.decoder.write(chunk);
    let out = '';
    let start = 0;
    for (;;) {
      const rest = text.slice(start);
      const m = SEPARATOR.exec(rest);
      if (!m) break;
      const event = rest.slice(0, m.index);
      out += this.relay(event, m[0]);
      start += m.index + m[0].length;
    }
    this.pending = text.slice(start);
    if (this.pending.length > MAX_PENDING_EVENT_CHARS) {
      out += this.pending;
      this.pending = '';
      this.oversized++;
    }
    return out;
  }

  /** Characters of a partial event held (at most MAX_PENDING_EVENT_CHARS). */
  get pendingChars(): number {
    return this.pending.length;
  }

  /** Whatever is left at the end of the body. */
  end(): string {
    const rest = this.pending + this.decoder.end();
    this.pending = '';
    return rest.length > 0 ? this.relay(rest, '') : '';
  }

  private relay(event: string, sep: string): string {
    let dataAt = 0;
    if (!event.startsWith('data:')) {
      const i = event.indexOf('\ndata:');
      if (i < 0) return event + sep;
      dataAt = i + 1;
    }
    const payload = event.slice(dataAt + 5).trimStart();
    if (payload.startsWith('[DONE]')) {
      this.sawDone = true;
      return event + sep;
    }
    this.events++;
    if (payload.startsWith('{"error"')) {
      // Relayed as it came (openai-node raises it as an APIError); noted for the request's row.
      const parsed = parseChunk(payload) as { error?: { message?: unknown } | string } | null;
      const e = parsed?.error;
      this.errorEvent = typeof e === 'string' ? e : typeof e?.message === 'string' ? e.message : 'error event';
      return event + sep;
    }
    if (payload.includes('"usage":{') || payload.includes('"usage": {')) {
      const parsed = parseChunk(payload);
      if (parsed?.usage) {
        this.usage = {
          promptTokens: typeof parsed.usage.prompt_tokens === 'number' ? parsed.usage.prompt_tokens : null,
          completionTokens: typeof parsed.usage.completion_tokens === 'number' ? parsed.usage.completion_tokens : null,
        };
        if (this.stripUsage) {
          if (Array.isArray(parsed.choices) && parsed.choices.length === 0) return '';
          delete parsed.usage;
          return event.slice(0, dataAt) + 'data: ' + JSON.stringify(parsed) + sep;
        }
      }
      return event + sep;
    }
    if (this.stripUsage && event.includes('"usage":null')) {
      return event.replace(/,"usage":null|"usage":null,?/g, '') + sep;
    }
    return event + sep;
  }
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
