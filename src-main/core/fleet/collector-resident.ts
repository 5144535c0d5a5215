// One resident collector channel: the exec that stays open on a host
// (collector-resident-script.ts), its answers cut out of the stdout stream by
// the channel's boundary. One request at a time. Anything that breaks the
// rhythm — the stream ends, the ready line never comes (a forced command, a
// banner instead of frames), an answer passes its cap or its deadline — closes
// the channel for good with a coded error; the owner opens a new one later.
import { StringDecoder } from 'node:string_decoder';
import { AppError, toAppError, type Clock, type Disposable } from '../base/index.js';
import type { ExecStream } from '../ssh/index.js';
import { FleetErrorCode } from './errors.js';

interface Waiter {
  mark: string;
  capBytes: number;
  timer: Disposable;
  resolve(text: string): void;
  reject(e: AppError): void;
}

/** stderr kept to explain an end (the shell's own complaint). */
const STDERR_KEPT = 2048;

export class ResidentChannel {
  private buf = '';
  private stderr = '';
  private readonly decoder = new StringDecoder('utf8');
  private waiter: Waiter | null = null;
  private ended: AppError | null = null;

  private constructor(
    private readonly stream: ExecStream,
    /** The channel's frame boundary (its answers are read by it). */
    readonly boundary: string,
    private readonly clock: Clock,
  ) {
    void this.pump();
  }

  /** Starts reading `stream` and waits for the loop's ready line (text before it, a banner, is dropped). */
  static async open(stream: ExecStream, boundary: string, clock: Clock, readyTimeoutMs: number): Promise<ResidentChannel> {
    const channel = new ResidentChannel(stream, boundary, clock);
    try {
      await channel.waitFor(`${boundary} R\n`, 64 * 1024, readyTimeoutMs, 'its ready line');
      if (!stream.writeStdin?.('')) throw new AppError(FleetErrorCode.COLLECTOR_RESIDENT_OFF, "this SSH transport gives a command's stdin no way in: the host is read by one exec a poll");
    } catch (err) {
      channel.close();
      throw err;
    }
    return channel;
  }

  get closed(): boolean {
    return this.ended !== null;
  }

  /** Sends one request line and resolves with its answer (from the stream's position to the end mark, inclusive). */
  request(line: string, deadlineMs: number, capBytes: number): Promise<string> {
    if (this.ended) return Promise.reject(this.ended);
    if (this.waiter) return Promise.reject(new AppError(FleetErrorCode.COLLECTOR_FAILED, 'the resident collector is still answering the previous poll', { retryable: true }));
    if (!this.stream.writeStdin?.(line)) {
      const err = new AppError(FleetErrorCode.COLLECTOR_CHANNEL_CLOSED, "the resident collector's stdin is closed", { retryable: true });
      this.finish(err);
      return Promise.reject(err);
    }
    return this.waitFor(`${this.boundary} E\n`, capBytes, deadlineMs, 'its answer');
  }

  close(): void {
    this.finish(new AppError(FleetErrorCode.COLLECTOR_CHANNEL_CLOSED, 'the resident collector was closed', { retryable: true }));
  }

  private waitFor(mark: string, capBytes: number, timeoutMs: number, what: string): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      const timer = this.clock.setTimeout(() => {
        this.finish(new AppError(FleetErrorCode.COLLECTOR_TIMEOUT, `the resident collector did not send ${what} within ${timeoutMs} ms`, { retryable: true, details: { timeoutMs } }));
      }, timeoutMs);
      this.waiter = { mark, capBytes, timer, resolve, reject };
      this.scan(0);
    });
  }

  private async pump(): Promise<void> {
    try {
      for await (const chunk of this.stream) {
        if (chunk.fd === 'stderr') {
          this.stderr = (this.stderr + chunk.data.toString('utf8')).slice(-STDERR_KEPT);
          continue;
        }
        const text = this.decoder.write(chunk.data);
        const from = Math.max(0, this.buf.length - 64);
        this.buf += text;
        this.scan(from);
        // Text no one waits for (between answers) is not kept.
        if (!this.waiter && this.buf.length > 64 * 1024) this.buf = this.buf.slice(-64);
      }
      const exit = await this.stream.exit.catch(() => null);
      if (!this.ended) this.finish(this.endError(`it ended (exit ${exit?.exitCode ?? exit?.signal ?? '?'})`));
    } catch (err) {
      if (!this.ended) this.finish(this.endError(toAppError(err).message, err));
    }
  }

  private endError(how: string, cause?: unknown): AppError {
    const line = (this.stderr || this.buf).trim().split('\n')[0]?.slice(0, 160) ?? '';
    return new AppError(FleetErrorCode.COLLECTOR_CHANNEL_CLOSED, `the resident collector's channel closed: ${how}${line ? `: ${line}` : ''}`, { retryable: true, cause });
  }

  /** Settles the waiter when its mark is in the buffer (at a line start, searched from `from`). */
  private scan(from: number): void {
    const w = this.waiter;
    if (!w) return;
    let at = this.buf.indexOf(w.mark, from);
    while (at > 0 && this.buf[at - 1] !== '\n') at = this.buf.indexOf(w.mark, at + 1);
    if (at < 0) {
      if (this.buf.length > w.capBytes) this.finish(new AppError(FleetErrorCode.COLLECTOR_TOO_LARGE, `the resident collector's answer passed ${w.capBytes} bytes`, { retryable: true, details: { capBytes: w.capBytes } }));
      return;
    }
    const end = at + w.mark.length;
    const text = this.buf.slice(0, end);
    this.buf = this.buf.slice(end);
    this.waiter = null;
    void w.timer.dispose();
    w.resolve(text);
  }

  /** Ends the channel: the waiting request fails with `err`, the exec is closed. */
  private finish(err: AppError): void {
    if (this.ended) return;
    this.ended = err;
    const w = this.waiter;
    this.waiter = null;
    if (w) {
      void w.timer.dispose();
      w.reject(err);
    }
    this.buf = '';
    this.stream.close();
  }
}
