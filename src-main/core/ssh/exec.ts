import type { Client, ClientChannel } from 'ssh2';
import { AppError, toDisposable, type Clock, type Disposable } from '../base/index.js';
import { SshErrorCode } from './errors.js';
import { ExecChunkQueue, streamedCommand, type ExecExit, type ExecStream, type ExecStreamOptions } from './exec-stream.js';

export interface ExecOptions {
  /** Default 10 s. On expiry the channel is closed and SSH_EXEC_TIMEOUT thrown. */
  timeoutMs?: number;
  /** Per stream (stdout and stderr each). Default 1 MiB; the rest is read and dropped. */
  maxOutputBytes?: number;
  signal?: AbortSignal;
}

export interface ExecResult {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  /** True when stdout or stderr went past maxOutputBytes and was cut. */
  truncated: boolean;
}

export class CappedBuffer {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  truncated = false;
  constructor(private readonly max: number) {}
  push(chunk: Buffer): void {
    const room = this.max - this.size;
    if (room <= 0) {
      if (chunk.length > 0) this.truncated = true;
      return;
    }
    const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
    if (part.length < chunk.length) this.truncated = true;
    this.chunks.push(part);
    this.size += part.length;
  }
  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

/** The caller's cancel, as every way of running a command reports it. */
export function execCancelled(): AppError {
  return new AppError(SshErrorCode.CANCELLED, 'exec was cancelled');
}

/**
 * What bounds one command, whatever runs it (an ssh2 channel, an `ssh`
 * process, the openssh command shell): its deadline (SSH_EXEC_TIMEOUT) and the
 * caller's signal (SSH_CANCELLED). `onLimit` is called with the first to come;
 * dispose when the command ends.
 */
export function armExecLimits(clock: Clock, options: ExecOptions, onLimit: (err: AppError) => void): Disposable {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const onAbort = (): void => onLimit(execCancelled());
  const timer = clock.setTimeout(
    () => onLimit(new AppError(SshErrorCode.EXEC_TIMEOUT, `command did not finish within ${timeoutMs} ms`, { retryable: true, details: { timeoutMs } })),
    timeoutMs,
  );
  options.signal?.addEventListener('abort', onAbort, { once: true });
  return toDisposable(() => {
    void timer.dispose();
    options.signal?.removeEventListener('abort', onAbort);
  });
}

/**
 * Runs one command on an open client. Output past the cap is drained, not
 * kept, so a chatty command still reports its exit code; the deadline bounds a
 * command that never ends.
 */
export function execOnClient(client: Client, command: string, clock: Clock, options: ExecOptions = {}): Promise<ExecResult> {
  const stdout = new CappedBuffer(options.maxOutputBytes ?? 1024 * 1024);
  const stderr = new CappedBuffer(options.maxOutputBytes ?? 1024 * 1024);
  if (options.signal?.aborted) return Promise.reject(execCancelled());

  return new Promise<ExecResult>((resolve, reject) => {
    let channel: ClientChannel | undefined;
    let settled = false;
    let exitCode: number | null = null;
    let exitSignal: string | null = null;
    const finish = (err: AppError | null): void => {
      if (settled) return;
      settled = true;
      void limits.dispose();
      if (err) {
        try {
          channel?.close();
        } catch {
          // already closed
        }
        reject(err);
        return;
      }
      resolve({ exitCode, signal: exitSignal, stdout: stdout.text(), stderr: stderr.text(), truncated: stdout.truncated || stderr.truncated });
    };
    const limits = armExecLimits(clock, options, finish);

    try {
      client.exec(command, (err, ch) => {
        if (err) {
          finish(new AppError(SshErrorCode.EXEC_FAILED, `could not start command: ${err.message}`, { retryable: true, cause: err }));
          return;
        }
        channel = ch;
        if (settled) {
          ch.close();
          return;
        }
        ch.on('data', (d: Buffer) => stdout.push(d));
        ch.stderr.on('data', (d: Buffer) => stderr.push(d));
        let exited = false;
        ch.on('exit', (code: number | null, sig?: string) => {
          exited = true;
          exitCode = typeof code === 'number' ? code : null;
          exitSignal = sig ?? null;
        });
        ch.on('error', (e: Error) =>
          finish(new AppError(SshErrorCode.EXEC_FAILED, `command channel failed: ${e.message}`, { retryable: true, cause: e })),
        );
        ch.on('close', () =>
          finish(
            exited
              ? null
              : new AppError(SshErrorCode.EXEC_FAILED, 'the command channel closed without an exit status', { retryable: true }),
          ),
        );
      });
    } catch (err) {
      finish(new AppError(SshErrorCode.NOT_CONNECTED, 'the SSH session is not open', { retryable: true, cause: err }));
    }
  });
}

/**
 * Runs one command on an open client as a stream (exec-stream.ts). The channel
 * is paused while the consumer's queue is full (ssh2 then stops widening the
 * window: the remote command blocks on write); close() ends and closes the
 * channel, whose EOF the kill-on-close wrapper turns into a kill of the
 * command's process group. The client closing under it is SSH_DISCONNECTED.
 */
export function streamOnClient(client: Client, command: string, options: ExecStreamOptions = {}): ExecStream {
  const queue = new ExecChunkQueue(options);
  let exit: ExecExit | null = null;
  const onClientClose = (): void => queue.fail(new AppError(SshErrorCode.DISCONNECTED, 'the SSH connection was lost while the command ran', { retryable: true }));
  // One listener per running stream (64 follows may share a host's client): lift Node's leak warning with them.
  if (client.listenerCount('close') + 1 >= client.getMaxListeners()) client.setMaxListeners(client.getMaxListeners() + 16);
  client.once('close', onClientClose);
  void queue.exit.then(
    () => client.removeListener('close', onClientClose),
    () => client.removeListener('close', onClientClose),
  );
  try {
    client.exec(streamedCommand(command, options), (err, ch) => {
      if (err) {
        queue.fail(new AppError(SshErrorCode.EXEC_FAILED, `could not start command: ${err.message}`, { retryable: true, cause: err }));
        return;
      }
      ch.on('data', (d: Buffer) => queue.push('stdout', d));
      ch.stderr.on('data', (d: Buffer) => queue.push('stderr', d));
      ch.on('exit', (code: number | null, sig?: string) => {
        exit = { exitCode: typeof code === 'number' ? code : null, signal: sig ?? null };
      });
      ch.on('error', (e: Error) => queue.fail(new AppError(SshErrorCode.EXEC_FAILED, `command channel failed: ${e.message}`, { retryable: true, cause: e })));
      ch.on('close', () => {
        if (exit) queue.end(exit);
        else queue.fail(new AppError(SshErrorCode.EXEC_FAILED, 'the command channel closed without an exit status', { retryable: true }));
      });
      queue.attach({
        pause: () => {
          ch.pause();
          ch.stderr.pause();
        },
        resume: () => {
          ch.resume();
          ch.stderr.resume();
        },
        close: () => {
          try {
            ch.end();
            ch.close();
          } catch {
            // already closed
          }
        },
        write: (data) => {
          ch.write(data);
        },
      });
    });
  } catch (err) {
    queue.fail(new AppError(SshErrorCode.NOT_CONNECTED, 'the SSH session is not open', { retryable: true, cause: err }));
  }
  return queue;
}
