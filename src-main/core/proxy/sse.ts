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

export class SseRelay {
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';
  usage: Usage | null = null;
  /** Data events seen (not counting [DONE]). */
  events = 0;
  sawDone = false;

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
    return out;
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

/** Usage from a complete (non-streaming) JSON answer; null when it has none. */
export function usageFromBody(body: Buffer): Usage | null {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { usage?: { prompt_tokens?: unknown; completion_tokens?: unknown } };
    if (!parsed.usage) return null;
    return {
      promptTokens: typeof parsed.usage.prompt_tokens === 'number' ? parsed.usage.prompt_tokens : null,
      completionTokens: typeof parsed.usage.completion_tokens === 'number' ? parsed.usage.completion_tokens : null,
    };
  } catch {
    return null;
  }
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
