// Streaming exec, the same on both transports: a command's stdout and stderr
// delivered as they arrive, through a bounded queue that pauses the source
// (ssh2 channel, or the `ssh` process's pipes) while the consumer lags, so a
// chatty command is slowed by SSH flow control rather than held in memory.
// The remote command runs under a small POSIX wrapper that watches its own
// stdin: when the channel closes (cancel, consumer gone, `ssh` killed) stdin
// reaches EOF and the wrapper kills the command's process group, so a
// `journalctl -f` or `tail -F` does not outlive the console's interest in it.
import { AppError } from '../base/index.js';
import { SshErrorCode } from './errors.js';
import { shellQuote } from './shell-quote.js';

export interface ExecStreamOptions {
  signal?: AbortSignal;
  /** Bytes held for the consumer before the source is paused; default 256 KiB (the bound is this plus one chunk). */
  highWaterBytes?: number;
  /** Run under the kill-on-close wrapper (default true); false runs the command as given. */
  killOnClose?: boolean;
}

export interface ExecChunk {
  fd: 'stdout' | 'stderr';
  data: Buffer;
}

export interface ExecExit {
  exitCode: number | null;
  /** The remote signal name when the command was killed by one (builtin transport; openssh reports exit 255). */
  signal: string | null;
}

/**
 * A running command's output. Iterate it for chunks (iteration ends when the
 * command ended and everything was read, or throws the coded error that ended
 * it); `exit` settles with the exit status, or rejects: SSH_DISCONNECTED (the
 * link went), SSH_EXEC_FAILED (could not start; the channel closed without a
 * status), SSH_CANCELLED (close() or the signal).
 */
export interface ExecStream extends AsyncIterable<ExecChunk> {
  readonly exit: Promise<ExecExit>;
  /** Bytes queued for the consumer now. */
  readonly bufferedBytes: number;
  /** Whether the source is paused for the consumer now. */
  readonly paused: boolean;
  /** Stops the command (the channel closes; the wrapper kills its process group). Harmless after the end. */
  close(): void;
  /**
   * Writes to the command's stdin (meant for `killOnClose: false`: the wrapper reads stdin itself);
   * false when the stream has ended, is not open yet, or its transport keeps stdin.
   * An empty string writes nothing: it only asks.
   */
  writeStdin?(data: string): boolean;
}

/** What the queue drives on the transport's side. */
export interface StreamSource {
  pause(): void;
  resume(): void;
  /** Close the channel / end the `ssh` process. */
  close(): void;
  /** The command's stdin; absent where the transport does not offer it. */
  write?(data: string): void;
}

const DEFAULT_HIGH_WATER = 256 * 1024;

type Ending = { exit: ExecExit } | { error: AppError };

/** The bounded queue between a transport and the consumer; the transport pushes, ends or fails it. */
export class ExecChunkQueue implements ExecStream {
  private readonly chunks: ExecChunk[] = [];
  private bytes = 0;
  private _paused = false;
  private ending: Ending | null = null;
  private wake: (() => void) | null = null;
  private source: StreamSource | null = null;
  private readonly highWater: number;
  private resolveExit!: (e: ExecExit) => void;
  private rejectExit!: (e: AppError) => void;
  readonly exit: Promise<ExecExit>;

  constructor(options: ExecStreamOptions = {}) {
    this.highWater = Math.max(1024, options.highWaterBytes ?? DEFAULT_HIGH_WATER);
    this.exit = new Promise<ExecExit>((resolve, reject) => {
      this.resolveExit = resolve;
      this.rejectExit = reject;
    });
    // The caller may only iterate; an unread rejection is not a crash.
    this.exit.catch(() => undefined);
    const signal = options.signal;
    if (signal) {
      if (signal.aborted) queueMicrotask(() => this.close());
      else signal.addEventListener('abort', () => this.close(), { once: true });
    }
  }

  get bufferedBytes(): number {
    return this.bytes;
  }
  get paused(): boolean {
    return this._paused;
  }
  get ended(): boolean {
    return this.ending !== null;
  }

  /** The transport's channel, once open; a queue closed before that closes it at once. */
  attach(source: StreamSource): void {
    this.source = source;
    if (this.ending) source.close();
    else if (this._paused) source.pause();
  }

  push(fd: ExecChunk['fd'], data: Buffer): void {
    if (this.ending || data.length === 0) return;
    this.chunks.push({ fd, data });
    this.bytes += data.length;
    if (!this._paused && this.bytes >= this.highWater) {
      this._paused = true;
      this.source?.pause();
    }
    this.notify();
  }

  /** The command ended; what is queued is still read. */
  end(exit: ExecExit): void {
    if (this.ending) return;
    this.ending = { exit };
    this.resolveExit(exit);
    this.notify();
  }

  /** The stream failed; what is queued is still read, then the error is thrown. */
  fail(error: AppError): void {
    if (this.ending) return;
    this.ending = { error };
    this.rejectExit(error);
    this.notify();
  }

  writeStdin(data: string): boolean {
    if (this.ending || !this.source?.write) return false;
    if (data.length > 0) this.source.write(data);
    return true;
  }

  close(): void {
    if (!this.ending) this.fail(new AppError(SshErrorCode.CANCELLED, 'the command stream was closed'));
    this.chunks.length = 0;
    this.bytes = 0;
    this.source?.close();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<ExecChunk, void, undefined> {
    try {
      for (;;) {
        const chunk = this.chunks.shift();
        if (chunk) {
          this.bytes -= chunk.data.length;
          if (this._paused && this.bytes <= this.highWater / 2) {
            this._paused = false;
            this.source?.resume();
          }
          yield chunk;
          continue;
        }
        const ending = this.ending;
        if (ending) {
          if ('error' in ending && ending.error.code !== SshErrorCode.CANCELLED) throw ending.error;
          return;
        }
        await new Promise<void>((resolve) => (this.wake = resolve));
      }
    } finally {
      // A consumer that stops reading (break, throw) is done with the command.
      if (!this.ending) this.close();
    }
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }
}

// Runs $1 in a session of its own (setsid, where the host has it: util-linux), watches the channel's stdin
// on fd 3, and on EOF kills the command's process group; the command's own exit status is the wrapper's.
// Background jobs of a non-interactive sh read /dev/null unless redirected, hence the explicit <&3.
const WRAPPER =
  'exec 3<&0; if command -v setsid >/dev/null 2>&1; then setsid sh -c "$1" </dev/null & else sh -c "$1" </dev/null & fi; p=$!; ' +
  '{ trap "exit 0" TERM; while read -r _; do :; done; kill -TERM -"$p" 2>/dev/null || kill -TERM "$p" 2>/dev/null; } <&3 3<&- & w=$!; ' +
  'exec 3<&-; wait "$p"; s=$?; kill "$w" 2>/dev/null; exit "$s"';

/** `command` under the kill-on-close wrapper; the command is one quoted argument, never spliced into the wrapper. */
export function killOnCloseCommand(command: string): string {
  return `sh -c ${shellQuote(WRAPPER)} gc-stream ${shellQuote(command)}`;
}

/** A command as a stream runs it (wrapped unless the caller said not to). */
export function streamedCommand(command: string, options: ExecStreamOptions): string {
  return options.killOnClose === false ? command : killOnCloseCommand(command);
}
