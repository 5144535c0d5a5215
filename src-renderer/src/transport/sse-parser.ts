// Incremental text/event-stream parser (the WHATWG algorithm, minus `id`
// bookkeeping we do not use): chunks may split lines, CRLF pairs or fields
// anywhere; `:` lines are comments; several `data:` lines join with "\n".

export interface SseMessage {
  readonly event: string;
  readonly data: string;
  readonly id: string | null;
}

export class SseParser {
  private buffer = '';
  /** The previous chunk ended in CR: a leading LF in the next one belongs to it. */
  private pendingCr = false;
  private eventName = '';
  private dataLines: string[] = [];
  private hasData = false;
  private lastId: string | null = null;
  private retryMs: number | null = null;

  /** Suggested reconnect delay sent by the server (`retry:`), if any. */
  get retry(): number | null {
    return this.retryMs;
  }

  /** Feeds decoded text; returns the messages completed by it. */
  push(chunk: string): SseMessage[] {
    const out: SseMessage[] = [];
    if (chunk === '') return out; // an empty read must not forget a pending CR
    let text = chunk;
    if (this.pendingCr && text.startsWith('\n')) text = text.slice(1);
    this.pendingCr = false;
    // the kept buffer holds no CR/LF (it starts after the last one): scan only the new text
    const scanFrom = this.buffer.length;
    this.buffer += text;
    let start = 0;
    for (let i = scanFrom; i < this.buffer.length; i++) {
      const ch = this.buffer.charCodeAt(i);
      if (ch !== 10 && ch !== 13) continue;
      this.line(this.buffer.slice(start, i), out);
      if (ch === 13) {
        if (i + 1 < this.buffer.length) {
          if (this.buffer.charCodeAt(i + 1) === 10) i++;
        } else {
          this.pendingCr = true;
        }
      }
      start = i + 1;
    }
    this.buffer = this.buffer.slice(start);
    return out;
  }

  /** Drops a half-received message (the stream ended or was replaced). */
  reset(): void {
    this.buffer = '';
    this.pendingCr = false;
    this.eventName = '';
    this.dataLines = [];
    this.hasData = false;
  }

  private line(line: string, out: SseMessage[]): void {
    if (line === '') {
      this.dispatch(out);
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    switch (field) {
      case 'event':
        this.eventName = value;
        break;
      case 'data':
        this.dataLines.push(value);
        this.hasData = true;
        break;
      case 'id':
        if (!value.includes('\0')) this.lastId = value;
        break;
      case 'retry':
        if (/^\d+$/.test(value)) this.retryMs = Number(value);
        break;
      default:
        break; // unknown fields are ignored, as the spec says
    }
  }

  private dispatch(out: SseMessage[]): void {
    if (this.hasData) {
      out.push({ event: this.eventName || 'message', data: this.dataLines.join('\n'), id: this.lastId });
    }
    this.eventName = '';
    this.dataLines = [];
    this.hasData = false;
  }
}
