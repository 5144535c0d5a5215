// From a command's bytes to lines a person can read: split on newlines with a
// bound per line (the rest of a 1 MB line is counted and said, not kept),
// decoded as UTF-8 with replacement characters for invalid bytes, binary
// garbage marked rather than shown, colour codes dropped, and secrets masked
// before a line leaves main.
import { scrubKnownSecrets, scrubSecretText } from '../base/index.js';

/** Bytes of one line kept by default; the rest is cut (and counted). */
export const DEFAULT_MAX_LINE_BYTES = 16 * 1024;

export interface RawLine {
  bytes: Buffer;
  /** Bytes of this line past the bound, dropped. */
  cutBytes: number;
}

/**
 * Splits a byte stream into lines ("\n", a trailing "\r" dropped). At most
 * `maxLineBytes` of a line are held; what follows until its newline is only
 * counted. Memory: one bound per splitter, whatever the input.
 */
export class LineSplitter {
  private held: Buffer[] = [];
  private heldBytes = 0;
  private cut = 0;

  constructor(private readonly maxLineBytes = DEFAULT_MAX_LINE_BYTES) {}

  push(chunk: Buffer): RawLine[] {
    const out: RawLine[] = [];
    let from = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, from);
      const end = nl < 0 ? chunk.length : nl;
      this.keep(chunk.subarray(from, end));
      if (nl < 0) break;
      out.push(this.take());
      from = nl + 1;
    }
    return out;
  }

  /** The last line when the stream ended without a newline; null when there is none. */
  flush(): RawLine | null {
    if (this.heldBytes === 0 && this.cut === 0) return null;
    return this.take();
  }

  private keep(part: Buffer): void {
    if (part.length === 0) return;
    const room = this.maxLineBytes - this.heldBytes;
    if (room > 0) {
      const kept = part.length > room ? part.subarray(0, room) : part;
      // A copy: the chunk is the transport's, and a held slice would pin all of it.
      this.held.push(Buffer.from(kept));
      this.heldBytes += kept.length;
    }
    this.cut += Math.max(0, part.length - Math.max(0, room));
  }

  private take(): RawLine {
    let bytes = this.held.length === 1 ? this.held[0]! : Buffer.concat(this.held, this.heldBytes);
    if (this.cut === 0 && bytes.length > 0 && bytes[bytes.length - 1] === 0x0d) bytes = bytes.subarray(0, bytes.length - 1);
    const line = { bytes, cutBytes: this.cut };
    this.held = [];
    this.heldBytes = 0;
    this.cut = 0;
    return line;
  }
}

export interface DecodedText {
  text: string;
  /** Bytes cut from the line (the splitter's, plus a partial character at the cut). */
  cutBytes: number;
  /** The line was mostly control bytes or invalid UTF-8: its text says so instead of showing it. */
  binary: boolean;
}

// SGR colour and other CSI sequences: servers colour their logs for terminals.
// eslint-disable-next-line no-control-regex -- matching the escape character is the point
const ANSI_CSI = /\u001b\[[0-9;?]*[ -/]*[@-~]/g;
// eslint-disable-next-line no-control-regex -- as above: C0 controls other than tab
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f]/g;

/** Where a cut at `at` must move back to so that no UTF-8 character is split. */
function charBoundary(bytes: Buffer, at: number): number {
  let j = at - 1;
  // Continuation bytes are 10xxxxxx: step back to the character's lead byte.
  while (j >= 0 && at - j <= 4 && (bytes[j]! & 0xc0) === 0x80) j--;
  if (j < 0) return at;
  const lead = bytes[j]!;
  if (lead < 0xc0) return at;
  const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : 2;
  return j + need > at ? j : at;
}

/** A raw line as text: UTF-8 with U+FFFD for invalid bytes, colour codes dropped, binary garbage named. */
export function decodeLine(raw: RawLine): DecodedText {
  let bytes = raw.bytes;
  let cutBytes = raw.cutBytes;
  if (cutBytes > 0) {
    const at = charBoundary(bytes, bytes.length);
    cutBytes += bytes.length - at;
    bytes = bytes.subarray(0, at);
  }
  const text = bytes.toString('utf8').replace(ANSI_CSI, '');
  const bad = (text.match(CONTROL)?.length ?? 0) + (text.match(/\uFFFD/g)?.length ?? 0);
  if (bytes.length >= 8 && bad * 10 > text.length) {
    return { text: `[binary data: ${bytes.length + cutBytes} bytes not shown]`, cutBytes: 0, binary: true };
  }
  return { text: text.replace(CONTROL, '\uFFFD'), cutBytes, binary: false };
}

/** A line's text as it may leave main: secrets written inline and the service's own keys masked. */
export function maskLine(text: string, knownSecrets: readonly string[]): string {
  return scrubSecretText(scrubKnownSecrets(text, knownSecrets));
}
