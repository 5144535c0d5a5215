// The openssh transport's command shell: one long-lived remote shell through
// the master, so a command costs a line written to it rather than a new `ssh`
// process (fork and exec of the client, its mux handshake with the master: a
// few milliseconds of CPU each, and the GPU poll runs one command per host per
// second). The shell only ever helps: a host where it cannot start (a
// restricted or non-POSIX shell, a ForceCommand; tried again after a minute,
// doubling to 30) and a command that arrives while another runs on it both
// take the one-shot path instead.
//
// Each command runs as sshd would run it, `$SHELL -c 'command'`, with stdin
// from /dev/null, then the shell writes an end line naming a marker drawn at
// random for that command (so no output can forge it) and the exit status, on
// stdout and on stderr. Output before the marker is the command's; a deadline
// or a cancel kills the shell (as the one-shot path kills its ssh), and the
// next command starts a new one.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { AppError, type Clock, type Disposable } from '../base/index.js';
import { SshErrorCode } from './errors.js';
import { armExecLimits, CappedBuffer, execCancelled, type ExecOptions, type ExecResult } from './exec.js';
import { lastLines } from './openssh-config.js';
import { shellQuote } from './shell-quote.js';

export type CommandShellState = 'none' | 'starting' | 'ready' | 'busy' | 'unsupported' | 'closed';

export interface CommandShellSpec {
  binary: string;
  /** ssh's arguments up to and including the host alias (the remote command is added). */
  args: string[];
  env: NodeJS.ProcessEnv;
  clock: Clock;
  label: string;
  /** How long the shell may take to answer its first line before the host counts as unable to keep one (default 15 s). */
  startTimeoutMs?: number;
}

const EMPTY = Buffer.alloc(0);
const STDERR_TAIL = 4096;
/** After a shell that would not start, the next try waits this long, doubling up to 30 min (a slow login, a full MaxSessions). */
const RETRY_FIRST_MS = 60_000;
const RETRY_MAX_MS = 30 * 60_000;

/**
 * One stream (stdout or stderr) of a command on the shell: bytes up to the
 * command's end line are its output (capped; the rest read and dropped); the
 * end line gives the exit status on stdout.
 */
export class MarkedStream {
  private held: Buffer = EMPTY;
  /** The end line was seen; its text after the marker (the exit status on stdout). */
  ended: string | null = null;
  private readonly marker: Buffer;

  constructor(
    mark: string,
    readonly output: CappedBuffer | null,
  ) {
    // The shell writes a newline before the marker, so output without a final newline still ends before it.
    this.marker = Buffer.from(`\n${mark}`, 'latin1');
  }

  push(chunk: Buffer): void {
    if (this.ended !== null) return; // bytes after the end line (a job the command left behind): not this command's
    const data = this.held.length > 0 ? Buffer.concat([this.held, chunk]) : chunk;
    const at = data.indexOf(this.marker);
    if (at >= 0) {
      this.output?.push(data.subarray(0, at));
      const eol = data.indexOf(0x0a, at + this.marker.length);
      if (eol < 0) {
        this.held = Buffer.from(data.subarray(at));
        return;
      }
      this.ended = data.subarray(at + this.marker.length, eol).toString('latin1').trim();
      this.held = EMPTY;
      return;
    }
    // No marker yet: all but what could be the marker's first bytes is output.
    const keepFrom = Math.max(0, data.length - (this.marker.length - 1));
    this.output?.push(data.subarray(0, keepFrom));
    this.held = Buffer.from(data.subarray(keepFrom));
  }
}

interface Running {
  out: MarkedStream;
  err: MarkedStream;
  /** Called once both end lines are in, or with the error that ended the run. */
  settle(err: AppError | null): void;
}

/** The end lines: the marker and `status` on stdout, the marker on stderr, each after a newline. */
function endLines(mark: string, status: string): string {
  return `printf '\\n%s %s\\n' ${mark} ${status}; printf '\\n%s\\n' ${mark} >&2\n`;
}

/** The line the shell reads for one command. */
export function shellLine(command: string, mark: string): string {
  return `"\${SHELL:-/bin/sh}" -c ${shellQuote(command)} </dev/null; ${endLines(mark, '"$?"')}`;
}

export class CommandShell implements Disposable {
  private child: ChildProcess | null = null;
  private _state: CommandShellState = 'none';
  private running: Running | null = null;
  /** The last of what came on stderr (ssh's own words among it), for the error when the shell goes. */
  private stderrTail = '';
  /** Starts that failed in a row, and when the next may be tried. */
  private failedStarts = 0;
  private retryAt = 0;

  constructor(private readonly spec: CommandShellSpec) {}

  get state(): CommandShellState {
    return this._state;
  }

  /**
   * Whether a command can run on the shell now (up and idle). With no shell up
   * it starts one for the commands after this one, and says no.
   */
  available(): boolean {
    if (this._state === 'none' || (this._state === 'unsupported' && this.spec.clock.now() >= this.retryAt)) this.start();
    return this._state === 'ready';
  }

  /** Runs `command` on the shell; call only when available() said yes. */
  run(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    if (this._state !== 'ready' || !this.child) return Promise.reject(new AppError(SshErrorCode.EXEC_FAILED, `${this.spec.label}: the command shell is not ready`, { retryable: true }));
    if (options.signal?.aborted) return Promise.reject(execCancelled());
    const mark = newMark();
    let line: string;
    try {
      line = shellLine(command, mark);
    } catch (err) {
      // A NUL byte cannot reach a shell (nor an argv): refused before the shell is touched.
      return Promise.reject(new AppError(SshErrorCode.EXEC_FAILED, `${this.spec.label}: ${(err as Error).message}`, { cause: err }));
    }
    const cap = options.maxOutputBytes ?? 1024 * 1024;
    this._state = 'busy';
    return new Promise<ExecResult>((resolve, reject) => {
      const stdout = new CappedBuffer(cap);
      const stderr = new CappedBuffer(cap);
      // A deadline or a cancel kills the shell: what the command left running there is unknown.
      const limits = armExecLimits(this.spec.clock, options, (err) => this.fail(err, true));
      const out = new MarkedStream(mark, stdout);
      this.running = {
        out,
        err: new MarkedStream(mark, stderr),
        settle: (err) => {
          void limits.dispose();
          this.running = null;
          if (err) {
            reject(err);
            return;
          }
          this._state = 'ready';
          const code = Number(out.ended);
          resolve({ exitCode: Number.isInteger(code) ? code : null, signal: null, stdout: stdout.text(), stderr: stderr.text(), truncated: stdout.truncated || stderr.truncated });
        },
      };
      this.child!.stdin!.write(line);
    });
  }

  /** Ends the shell; a command on it fails with `reason` (default: cancelled, the session closing). */
  async dispose(reason?: AppError): Promise<void> {
    const child = this.child;
    this.fail(reason ?? new AppError(SshErrorCode.CANCELLED, `${this.spec.label}: the SSH session closed`), true);
    this._state = 'closed';
    if (child && child.exitCode === null && child.signalCode === null) {
      await new Promise<void>((resolve) => {
        child.once('close', () => resolve());
        const t = setTimeout(resolve, 2_000);
        t.unref();
      });
    }
  }

  private start(): void {
    this._state = 'starting';
    // `exec /bin/sh`: whatever the login shell is, the shell that reads the lines is POSIX sh.
    const child = spawn(this.spec.binary, [...this.spec.args, 'exec /bin/sh'], { stdio: ['pipe', 'pipe', 'pipe'], env: this.spec.env });
    this.child = child;
    child.stdin!.on('error', () => undefined); // a shell that went away: its close says so
    child.stdout!.on('data', (d: Buffer) => this.onData('out', d));
    child.stderr!.on('data', (d: Buffer) => this.onData('err', d));
    child.once('error', (e) => this.gone(child, `could not run ${this.spec.binary}: ${e.message}`));
    child.once('close', (code) => this.gone(child, `the command shell ended (ssh exit ${code ?? 'signal'})`));
    // The first line answers with nothing but its end line: the shell reads and runs what it is sent. What the
    // login shell printed on its way up (a banner, sshd's debug lines) goes with it.
    const mark = newMark();
    const timer = this.spec.clock.setTimeout(() => this.fail(new AppError(SshErrorCode.EXEC_TIMEOUT, 'the command shell did not start'), true), this.spec.startTimeoutMs ?? 15_000);
    this.running = {
      out: new MarkedStream(mark, null),
      err: new MarkedStream(mark, null),
      settle: (err) => {
        void timer.dispose();
        this.running = null;
        if (!err && this.child === child) {
          this._state = 'ready';
          this.failedStarts = 0;
        }
      },
    };
    child.stdin!.write(endLines(mark, '0'));
  }

  /** A shell that never answered its first line: commands go one-shot, and a new shell is tried later. */
  private startFailed(): void {
    this._state = 'unsupported';
    this.retryAt = this.spec.clock.now() + Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** this.failedStarts);
    this.failedStarts++;
  }

  private onData(which: 'out' | 'err', chunk: Buffer): void {
    if (which === 'err') this.stderrTail = (this.stderrTail + chunk.toString('utf8')).slice(-STDERR_TAIL);
    const r = this.running;
    if (!r) return;
    (which === 'out' ? r.out : r.err).push(chunk);
    if (r.out.ended !== null && r.err.ended !== null) r.settle(null);
  }

  /** The run in flight fails with `err`; with `kill`, the shell goes too (its state is unknown now). */
  private fail(err: AppError, kill: boolean): void {
    const r = this.running;
    const wasStarting = this._state === 'starting';
    if (kill && this.child) {
      const child = this.child;
      this.child = null;
      child.kill('SIGKILL');
      if (wasStarting) this.startFailed();
      else this._state = 'none';
    }
    r?.settle(err);
  }

  private gone(child: ChildProcess, why: string): void {
    if (this.child !== child) return;
    this.child = null;
    if (this._state === 'starting') this.startFailed();
    else if (this._state !== 'closed') this._state = 'none';
    const r = this.running;
    const said = lastLines(this.stderrTail.replace(/^GCSH[0-9a-f]{24}.*$/gm, ''));
    r?.settle(new AppError(SshErrorCode.EXEC_FAILED, `${this.spec.label}: ${why}${said ? `: ${said}` : ''}`, { retryable: true }));
  }
}

function newMark(): string {
  return `GCSH${randomBytes(12).toString('hex')}`;
}
