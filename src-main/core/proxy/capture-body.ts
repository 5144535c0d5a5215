// One body of a captured request, from the bytes that passed to what is stored:
// kept up to the cap as references to the chunks as they went by (no copy on a
// request that is then not captured; a 50 MB body holds the cap, not 50 MB),
// told apart as text or as something that is not (compressed, binary, not
// UTF-8: size only, never garbage text), and redacted before it is stored.
import type { CaptureBodyMeta, CaptureEncoding } from '../../../src-preload/contract/index.js';
import { scrubKnownSecrets, scrubSecretText } from '../base/index.js';
import { TOKEN_PREFIX } from './tokens.js';

/** The first `cap` bytes of a body, held as the chunks that carried them, and the whole size. */
export class BodyTee {
  private readonly chunks: Array<Buffer | string> = [];
  private kept = 0;
  private size = 0;

  constructor(private readonly cap: number) {}

  push(chunk: Buffer | string): void {
    const length = typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.length;
    this.size += length;
    if (this.kept >= this.cap || length === 0) return;
    this.chunks.push(chunk);
    this.kept += length;
  }

  get sizeBytes(): number {
    return this.size;
  }

  get truncated(): boolean {
    return this.size > this.cap;
  }

  /** The kept bytes, at most the cap: one copy, made only for a capture that is stored. */
  bytes(): Buffer {
    const parts = this.chunks.map((c) => (typeof c === 'string' ? Buffer.from(c) : c));
    const all = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
    return all.length > this.cap ? all.subarray(0, this.cap) : all;
  }
}

/** Content types whose bodies are text (JSON, SSE, forms, XML, text/*). */
const TEXT_TYPE = /^(text\/|application\/([a-z0-9.+-]*\+)?(json|xml|x-ndjson|x-www-form-urlencoded|javascript)\b)/i;

export interface BodyHeaders {
  contentType: string | null;
  contentEncoding: string | null;
}

/** What is stored of one body: its figures and its text (null when it is not text). */
export interface DescribedBody {
  meta: CaptureBodyMeta;
  text: string | null;
}

/**
 * Classifies the kept bytes. A truncated body may end inside a UTF-8 sequence: that tail is
 * dropped rather than calling the body not UTF-8.
 */
export function describeBody(bytes: Buffer, sizeBytes: number, truncated: boolean, h: BodyHeaders): DescribedBody {
  const meta = (encoding: CaptureEncoding): CaptureBodyMeta => ({
    sizeBytes,
    storedBytes: encoding === 'utf8' ? bytes.length : 0,
    truncated,
    encoding,
    contentType: h.contentType,
    contentEncoding: h.contentEncoding,
  });
  if (sizeBytes === 0) return { meta: meta('empty'), text: null };
  const coded = h.contentEncoding !== null && h.contentEncoding.toLowerCase() !== 'identity';
  // gzip's magic bytes: a compressed body sent without its header is still not text.
  if (coded || (bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b)) return { meta: meta('compressed'), text: null };
  if ((h.contentType !== null && !TEXT_TYPE.test(h.contentType)) || bytes.includes(0)) return { meta: meta('binary'), text: null };
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: truncated });
  } catch {
    return { meta: meta('not_utf8'), text: null };
  }
  return { meta: meta('utf8'), text };
}

/** Names of headers whose values are credentials, stored as "[redacted]". */
const CREDENTIAL_HEADER = /^(authorization|proxy-authorization|x-api-key|api-key|cookie|set-cookie)$|(token|secret|password|passwd|api[-_]?key)/i;
/** A client token of this proxy, anyone's (not only the sender's). */
const CLIENT_TOKEN = new RegExp(`${TOKEN_PREFIX}[A-Za-z0-9_-]{8,}`, 'g');
const REDACTED = '[redacted]';
/** A client token's start at the very end of a truncated text. */
const CUT_CLIENT_TOKEN = new RegExp(`${TOKEN_PREFIX}[A-Za-z0-9_-]*$`);

/**
 * `text` with secrets replaced: the known values given (the client's token, the upstream's API key),
 * any client token of this proxy, and secrets written inline (auth headers, bearer tokens, `api_key=`).
 * A truncated text that ends with the start of a known secret has that start replaced too.
 */
export function redactText(text: string, secrets: readonly string[], truncated: boolean): string {
  let out = scrubSecretText(scrubKnownSecrets(text, secrets).replace(CLIENT_TOKEN, REDACTED));
  if (truncated) out = redactCutSecret(out, secrets);
  return out;
}

/** The cap may cut a secret in two: the half that was kept is still a secret's start. */
function redactCutSecret(text: string, secrets: readonly string[]): string {
  const cutToken = CUT_CLIENT_TOKEN.exec(text);
  if (cutToken) return text.slice(0, cutToken.index) + REDACTED;
  for (const s of secrets) {
    if (s.length < 4) continue;
    for (let n = Math.min(s.length - 1, text.length); n >= 4; n--) {
      if (text.endsWith(s.slice(0, n))) return text.slice(0, text.length - n) + REDACTED;
    }
  }
  return text;
}

/** Headers as stored: one string per name, credentials replaced, other values scrubbed. */
export function redactHeaders(headers: Readonly<Record<string, string | number | readonly string[] | undefined>>, secrets: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const joined = Array.isArray(value) ? value.join(', ') : String(value as string | number);
    out[name.toLowerCase()] = CREDENTIAL_HEADER.test(name) ? REDACTED : redactText(joined, secrets, false);
  }
  return out;
}
