// Keep-alive HTTP/1.1 by hand over one stream (a TCP socket or an SSH
// channel), so a test sees exactly when the server closes the connection.

import type { Duplex } from 'node:stream';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Reads answers (Content-Length bodies) off one connection, one per `request()`; `closed` resolves when the server closes it. */
export class RawConnection {
  readonly closed: Promise<void>;
  private buffer = Buffer.alloc(0);
  private waiting: { resolve(r: RawResponse | 'closed'): void } | null = null;
  private ended = false;
  /** Bytes received after the last complete answer (a closed connection that sent part of an answer). */
  bytesSinceLastAnswer = 0;

  constructor(private readonly stream: Duplex) {
    this.closed = new Promise((resolve) => {
      const done = () => {
        this.ended = true;
        this.waiting?.resolve('closed');
        this.waiting = null;
        resolve();
      };
      stream.once('close', done);
      stream.once('end', done);
      stream.on('error', () => undefined);
    });
    stream.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.bytesSinceLastAnswer += chunk.length;
      this.pump();
    });
  }

  /** Sends one request; resolves with its answer, or `closed` when the connection closed first. */
  request(method: string, path: string, body?: string): Promise<RawResponse | 'closed'> {
    if (this.ended) return Promise.resolve('closed');
    const head = [`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1', ...(body !== undefined ? ['Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`] : [])];
    return new Promise((resolve) => {
      this.waiting = { resolve };
      this.stream.write(`${head.join('\r\n')}\r\n\r\n${body ?? ''}`, () => undefined);
      this.pump();
    });
  }

  destroy(): void {
    this.stream.destroy();
  }

  private pump(): void {
    if (!this.waiting) return;
    const end = this.buffer.indexOf('\r\n\r\n');
    if (end < 0) return;
    const lines = this.buffer.subarray(0, end).toString('latin1').split('\r\n');
    const status = Number(lines[0]!.split(' ')[1]);
    const headers: Record<string, string> = {};
    for (const l of lines.slice(1)) {
      const i = l.indexOf(':');
      headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    if (this.buffer.length < end + 4 + length) return;
    const body = this.buffer.subarray(end + 4, end + 4 + length).toString('utf8');
    this.buffer = this.buffer.subarray(end + 4 + length);
    this.bytesSinceLastAnswer = this.buffer.length;
    const w = this.waiting;
    this.waiting = null;
    w.resolve({ status, headers, body });
  }
}
