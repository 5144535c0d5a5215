// The one-shot ssh runs of the openssh transport: a command through the
// master (deadline, output caps, cancellation), `ssh -G` for the settings ssh
// will use, and the certificate check made before ssh tries a certificate.
import { execFile, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { AppError, type Clock } from '../base/index.js';
import { SshErrorCode } from './errors.js';
import { armExecLimits, CappedBuffer, execCancelled, type ExecOptions, type ExecResult } from './exec.js';
import { ExecChunkQueue, type ExecStream, type ExecStreamOptions } from './exec-stream.js';
import { checkKeyFile } from './keys.js';
import { certificateProblem, lastLines, parseCertificateListing } from './openssh-config.js';

/** Effective settings `ssh -G` reports that an operator checks first. */
const SHOWN_SETTINGS = ['hostname', 'port', 'user', 'proxyjump', 'proxycommand', 'identityfile', 'certificatefile', 'identityagent', 'identitiesonly', 'userknownhostsfile', 'stricthostkeychecking', 'controlpath', 'serveraliveinterval', 'serveralivecountmax', 'connecttimeout'];

export interface CommandRun {
  binary: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  clock: Clock;
  label: string;
}

/** One `ssh … -- alias command` run: output past the cap is dropped (and said), the deadline kills it. */
export function runCommand(run: CommandRun, options: ExecOptions = {}): Promise<ExecResult> {
  const cap = options.maxOutputBytes ?? 1024 * 1024;
  if (options.signal?.aborted) return Promise.reject(execCancelled());
  return new Promise<ExecResult>((resolve, reject) => {
    const child = spawn(run.binary, run.args, { stdio: ['ignore', 'pipe', 'pipe'], env: run.env });
    const out = new CappedBuffer(cap);
    const err = new CappedBuffer(cap);
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => err.push(d));
    let done = false;
    const finish = (e: AppError | null, result?: ExecResult) => {
      if (done) return;
      done = true;
      void limits.dispose();
      if (e) {
        child.kill('SIGKILL');
        reject(e);
      } else resolve(result!);
    };
    const limits = armExecLimits(run.clock, options, (e) => finish(e));
    child.on('error', (e) => finish(new AppError(SshErrorCode.EXEC_FAILED, `could not run ${run.binary}: ${e.message}`, { retryable: true, cause: e })));
    child.on('close', (code, signal) => {
      const stderr = err.text();
      // 255 is ssh's own failure, unless the remote command chose it: the mux client then says nothing.
      if (code === 255 && /mux_client|Control socket|ControlSocket|master|Connection to .* closed|proxy|kex_exchange/i.test(stderr)) {
        finish(new AppError(SshErrorCode.EXEC_FAILED, `${run.label}: the command did not run: ${lastLines(stderr)}`, { retryable: true }));
        return;
      }
      finish(null, { exitCode: code, signal: signal ?? null, stdout: out.text(), stderr, truncated: out.truncated || err.truncated });
    });
  });
}

/** `ssh -G`: the settings ssh will use, read before connecting; a config ssh refuses stops here, with its words. */
export function effectiveSettings(binary: string, configPath: string, alias: string, env: NodeJS.ProcessEnv, label: string): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    execFile(binary, ['-G', '-F', configPath, '--', alias], { timeout: 10_000, env, maxBuffer: 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) {
        reject(
          new AppError(SshErrorCode.OPENSSH_CONFIG_INVALID, `${label}: ssh refused the configuration: ${lastLines(stderr) || err.message}`, {
            details: { stderr: lastLines(stderr), alias },
          }),
        );
        return;
      }
      const all: Record<string, string> = {};
      for (const line of stdout.split('\n')) {
        const sp = line.indexOf(' ');
        if (sp <= 0) continue;
        const k = line.slice(0, sp);
        const v = line.slice(sp + 1);
        all[k] = all[k] ? `${all[k]}, ${v}` : v;
      }
      const shown: Record<string, string> = {};
      for (const k of SHOWN_SETTINGS) if (all[k] !== undefined) shown[k] = all[k]!;
      resolve(shown);
    });
  });
}

/** A certificate that cannot work is named before ssh tries it (sshd would only say "Permission denied"). */
export async function checkCertificate(file: string | undefined, user: string, label: string, now: number): Promise<void> {
  if (!file) return;
  if (!existsSync(file)) throw new AppError(SshErrorCode.KEY_UNREADABLE, `${label}: certificate ${file} does not exist`, { details: { file } });
  // A FIFO would hold ssh-keygen (and then ssh) until their deadlines; a huge file is no certificate.
  await checkKeyFile(file, `${label}: certificate`);
  const listing = await new Promise<string | null>((resolve) => {
    execFile('ssh-keygen', ['-L', '-f', file], { timeout: 5_000 }, (err, stdout) => resolve(err ? null : stdout));
  });
  if (listing === null) return; // no ssh-keygen here: ssh and sshd will judge it
  const info = parseCertificateListing(listing);
  if (!info) throw new AppError(SshErrorCode.CERTIFICATE_INVALID, `${label}: ${file} is not an OpenSSH certificate`, { details: { file } });
  const problem = certificateProblem(info, file, user, now);
  if (problem) throw new AppError(problem.code, `${label}: ${problem.message}`, { details: problem.details });
}

/** ssh's own words when the master or the link went (not the remote command's exit 255). */
const LINK_GONE = /mux_client|Control socket|ControlSocket|master|Connection to .* closed|Shared connection to .* closed|broken pipe|kex_exchange/i;

/**
 * One `ssh … -- alias command` as a stream (exec-stream.ts): a process of its
 * own through the master, its pipes paused while the consumer's queue is full
 * (the mux client then stops reading, and SSH flow control stops the remote
 * command). close() ends ssh's stdin and kills it: the master closes the
 * channel, and the kill-on-close wrapper on the host kills the command's
 * process group on the stdin EOF that follows. `linkGone` tells a lost link
 * from a command's own exit 255 (ssh says nothing either way).
 */
export function streamCommand(run: CommandRun, options: ExecStreamOptions = {}, linkGone?: () => Promise<boolean>): ExecStream {
  const queue = new ExecChunkQueue(options);
  const child = spawn(run.binary, run.args, { stdio: ['pipe', 'pipe', 'pipe'], env: run.env });
  let stderrTail = '';
  let closedByUs = false;
  child.stdin.on('error', () => undefined); // ssh gone: its close says how
  child.stdout.on('data', (d: Buffer) => queue.push('stdout', d));
  child.stderr.on('data', (d: Buffer) => {
    stderrTail = (stderrTail + d.toString('utf8')).slice(-4096);
    queue.push('stderr', d);
  });
  child.on('error', (e) => queue.fail(new AppError(SshErrorCode.EXEC_FAILED, `could not run ${run.binary}: ${e.message}`, { retryable: true, cause: e })));
  child.on('close', (code, signal) => {
    if (closedByUs) return;
    const lost = () =>
      queue.fail(new AppError(SshErrorCode.DISCONNECTED, `${run.label}: the SSH connection was lost while the command ran${stderrTail.trim() ? `: ${lastLines(stderrTail)}` : ''}`, { retryable: true }));
    const ended = () => queue.end({ exitCode: code, signal: signal ?? null });
    if (code !== 255) return ended();
    if (LINK_GONE.test(stderrTail)) return lost();
    // The mux client ends with 255 and no word when the master's link goes; a command may also exit 255.
    if (!linkGone) return ended();
    linkGone().then((gone) => (gone ? lost() : ended()), ended);
  });
  queue.attach({
    pause: () => {
      child.stdout.pause();
      child.stderr.pause();
    },
    resume: () => {
      child.stdout.resume();
      child.stderr.resume();
    },
    close: () => {
      closedByUs = true;
      child.stdin.end();
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    },
    // The mux client passes its stdin to the command (no -n here), as an ssh2 channel's write does.
    write: (data) => {
      child.stdin.write(data);
    },
  });
  return queue;
}
