// The openssh transport: one session per host through the system `ssh`, as a
// ControlMaster whose socket lives in the console's control folder. Commands
// and forwards go through the master (`-S`); the master's life is the
// session's link. The states, errors and host-key decisions are the same as
// the builtin transport's (SshConnection), so everything above sees one kind
// of session.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { connect as netConnect, type Socket } from 'node:net';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { AppError, toAppError } from '../base/index.js';
import { SshErrorCode } from './errors.js';
import type { ExecOptions, ExecResult } from './exec.js';
import { streamedCommand, type ExecStream, type ExecStreamOptions } from './exec-stream.js';
import { checkCertificate, effectiveSettings, runCommand, streamCommand } from './openssh-commands.js';
import { knownHostsName } from './known-hosts.js';
import { assertSocketPath, classifyStderr, controlStem, generatedConfig, lastLines, targetWhere } from './openssh-config.js';
import type { OpenSshHelperServer } from './openssh-helper.js';
import { LoginQuestions, PROMPT_WAIT_MS } from './openssh-login.js';
import { CommandShell, type CommandShellState } from './openssh-shell.js';
import type { SshConnectionOptions, SshHostTarget, SshSession, SshTransportInfo } from './session.js';
import type { OpenSshProbe } from './transport.js';
import { SessionCore } from './session-core.js';

export interface OpenSshSessionOptions extends Omit<SshConnectionOptions, 'clientFactory'> {
  /** Control sockets, generated configs and the helper live here (mode 0700). */
  controlDir: string;
  /** The OpenSSH client; default `ssh`. */
  binary?: string;
  helper: OpenSshHelperServer;
  probe: OpenSshProbe;
  /** How long a host's keyboard-interactive question waits for the operator; default 110 s (sshd allows 120). */
  promptWaitMs?: number;
  /**
   * Commands on one long-lived remote shell through the master when it is free (default true), instead of an
   * `ssh` process per command; false: every command one-shot (the bench compares the two).
   */
  commandShell?: boolean;
}

const STDERR_CAP = 16 * 1024;


export class OpenSshSession extends SessionCore implements SshSession {
  declare protected readonly options: OpenSshSessionOptions;
  private readonly binary: string;
  private readonly stem: string;
  private readonly controlPath: string;
  private readonly configPath: string;
  private _effective: Record<string, string> | null = null;
  private _version: string | null = null;
  private alias = '';
  /** What ssh asks during the attempt in flight (host keys, passphrases, the host's questions). */
  private login: LoginQuestions | null = null;
  /** The ControlMaster of the connected link, or of the attempt in flight. */
  private master: ChildProcess | null = null;
  private masterExited: Promise<void> | null = null;
  /** Forwards added on the current master: `host:port` → the local socket path ssh listens on. */
  private forwards = new Map<string, Promise<string>>();
  private forwardCount = 0;
  /** The command shell of the current master (one per master: it goes when the master goes). */
  private shell: CommandShell | null = null;

  constructor(target: SshHostTarget, options: OpenSshSessionOptions) {
    super(target, options, 'openssh');
    this.binary = options.binary ?? 'ssh';
    this.stem = controlStem(target.label);
    this.controlPath = join(options.controlDir, `${this.stem}.ctl`);
    this.configPath = join(options.controlDir, `${this.stem}.conf`);
  }

  get hasLiveClient(): boolean {
    return this.master !== null;
  }
  /** What `ssh -G` said the connection uses (null before the first attempt). */
  get effectiveSettings(): Record<string, string> | null {
    return this._effective;
  }
  get pendingPrompt(): { text: string; expiresAt: number } | null {
    return this.login?.pendingPrompt ?? null;
  }

  answerPrompt(answer: string): boolean {
    return this.login?.answerPrompt(answer) ?? false;
  }

  cancelPrompt(): boolean {
    return this.login?.cancelPrompt() ?? false;
  }

  get transport(): SshTransportInfo {
    return { kind: 'openssh', why: this.options.transportWhy ?? 'openssh', client: this._version, effective: this._effective, commands: this.commandsInWords() };
  }

  /** ssh's own ServerAliveInterval watches the link; the session has no byte clock of its own. */
  silentForMs(): number | null {
    return null;
  }

  exec(command: string, options: ExecOptions = {}): Promise<ExecResult> {
    this.requireConnected();
    const shell = this.commandShell();
    if (shell?.available()) return shell.run(command, options);
    return runCommand({ binary: this.binary, args: [...this.muxArgs(), '-n', '--', this.alias, command], env: this.childEnv({}), clock: this.clock, label: this.label }, options);
  }

  /**
   * A stream never takes the command shell (it would hold it for as long as it runs): an `ssh` process of
   * its own through the master, its stdin a pipe whose end the host's kill-on-close wrapper watches.
   */
  execStream(command: string, options: ExecStreamOptions = {}): ExecStream {
    this.requireConnected();
    const run = { binary: this.binary, args: [...this.muxArgs(), '--', this.alias, streamedCommand(command, options)], env: this.childEnv({}), clock: this.clock, label: this.label };
    return streamCommand(run, options, () => this.masterGoneWithin(2_000));
  }

  /** Whether the current master ends within `ms` (its link went), or is gone already. */
  private masterGoneWithin(ms: number): Promise<boolean> {
    const exited = this.masterExited;
    if (!exited) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const timer = this.clock.setTimeout(() => resolve(false), ms);
      void exited.then(() => {
        void timer.dispose();
        resolve(true);
      });
    });
  }

  /** The command shell's state ('none' before the first command; 'unsupported' on a host that cannot keep one). */
  get commandShellState(): CommandShellState {
    return this.shell?.state ?? 'none';
  }

  private commandsInWords(): string {
    if (this.options.commandShell === false) return 'an ssh process each';
    switch (this.commandShellState) {
      case 'ready':
      case 'busy':
        return 'on one remote shell through the master';
      case 'unsupported':
        return 'an ssh process each (a remote shell would not start here: no POSIX shell, a ForceCommand or a restricted shell; tried again later)';
      default:
        return 'an ssh process each until the remote shell is up';
    }
  }

  /** Through the master only: were it gone, `ProxyCommand false` makes ssh fail rather than log in anew. */
  private muxArgs(): string[] {
    return ['-F', this.configPath, '-S', this.controlPath, '-o', 'ControlMaster=no', '-o', 'ProxyCommand=false', '-T'];
  }

  private commandShell(): CommandShell | null {
    if (this.options.commandShell === false || this.master === null) return null;
    this.shell ??= new CommandShell({ binary: this.binary, args: [...this.muxArgs(), '--', this.alias], env: this.childEnv({}), clock: this.clock, label: this.label });
    return this.shell;
  }

  /** A stream to `dstHost:dstPort` through the master: a Unix-socket forward added on it once per destination. */
  async forwardOut(_srcIp: string, _srcPort: number, dstHost: string, dstPort: number): Promise<Duplex> {
    await this.whenConnected(this.options.waitForConnectionMs ?? 5_000);
    const gen = this.generation;
    const key = `${dstHost}:${dstPort}`;
    let path = this.forwards.get(key);
    if (!path) {
      path = this.addForward(dstHost, dstPort);
      this.forwards.set(key, path);
      path.catch(() => {
        if (this.forwards.get(key) === path && gen === this.generation) this.forwards.delete(key);
      });
    }
    const socketPath = await path;
    const timeoutMs = this.options.channelOpenTimeoutMs ?? 10_000;
    return new Promise<Duplex>((resolve, reject) => {
      const sock: Socket = netConnect(socketPath);
      const timer = this.clock.setTimeout(() => {
        sock.destroy();
        reject(new AppError(SshErrorCode.FORWARD_FAILED, `${this.label}: the forward to ${key} did not open within ${timeoutMs} ms`, { retryable: true }));
      }, timeoutMs);
      sock.once('connect', () => {
        void timer.dispose();
        resolve(sock);
      });
      sock.once('error', (e) => {
        void timer.dispose();
        reject(new AppError(SshErrorCode.FORWARD_FAILED, `${this.label}: the forward to ${key} failed: ${e.message}`, { retryable: true, cause: e }));
      });
    });
  }

  override async dispose(): Promise<void> {
    if (this.disposed) return;
    await super.dispose();
    rmSync(this.configPath, { force: true });
  }

  // --- internals -----------------------------------------------------------

  private requireConnected(): void {
    if (this._state !== 'connected' || !this.master) throw this.notConnected();
  }

  private agentSock(): string | null {
    const ssh = this.target.ssh;
    if (ssh.identityAgent) return ssh.identityAgent;
    if (ssh.agent) return (this.options.env ?? process.env)['SSH_AUTH_SOCK'] || null;
    return null;
  }

  /** ssh's environment: the console's, with the helper's variables; no agent unless the host uses one. */
  private childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = { ...(this.options.env ?? process.env), ...extra };
    delete env['DISPLAY'];
    const agent = this.agentSock();
    if (agent && !this.target.ssh.configHost) env['SSH_AUTH_SOCK'] = agent;
    return env;
  }

  protected async attempt(state: 'connecting' | 'reconnecting', reason?: AppError): Promise<void> {
    const gen = ++this.generation;
    this.setState({ state, ...(reason ? { error: reason } : {}) });
    const sessionId = `${this.stem}-${gen}`;
    this.login?.close();
    const notes = new LoginQuestions({
      label: this.label,
      identityFile: this.target.ssh.identityFile ?? null,
      clock: this.clock,
      logger: this.logger,
      promptWaitMs: this.options.promptWaitMs ?? PROMPT_WAIT_MS,
      knownHostsFile: () => this.knownHostsFile(),
      trustStore: () => this.service('trustStore'),
      passphrases: () => this.service('passphrases'),
      targetEndpoint: () => this.targetEndpoint(),
      onHostFingerprint: (fingerprint) => (this._fingerprint = fingerprint),
    });
    this.login = notes;
    try {
      if (process.platform === 'win32') {
        throw new AppError(SshErrorCode.OPENSSH_TOO_OLD, `${this.label}: the OpenSSH client for Windows has no ControlMaster (it needs Unix sockets); use transport: builtin on Windows`);
      }
      const probed = await this.options.probe.probe(this.binary);
      if (!probed.version) throw probed.error ?? new AppError(SshErrorCode.OPENSSH_MISSING, `no OpenSSH client ${this.binary}`);
      this._version = probed.version.text;
      mkdirSync(this.options.controlDir, { recursive: true, mode: 0o700 });
      assertSocketPath(this.controlPath, this.label);
      await checkCertificate(this.target.ssh.certificateFile, this.target.ssh.user, this.label, this.clock.now());
      const helper = await this.options.helper.register(sessionId, (q) => (gen === this.generation ? notes.answer(q) : Promise.resolve({ cancel: 'superseded' })));
      const config = generatedConfig({
        target: this.target,
        configPath: this.configPath,
        knownHostsFile: this.knownHostsFile(),
        controlPath: this.controlPath,
        helperProgram: helper.program,
        keepaliveIntervalS: Math.max(1, Math.round((this.target.ssh.keepaliveIntervalMs ?? 5_000) / 1000)),
        keepaliveCountMax: this.options.keepaliveCountMax ?? 2,
        connectTimeoutS: Math.max(1, Math.ceil((this.options.readyTimeoutMs ?? 15_000) / 1000)),
        agentSock: this.agentSock(),
      });
      this.alias = config.alias;
      writeFileSync(this.configPath, config.text, { mode: 0o600 });
      this._effective = await effectiveSettings(this.binary, this.configPath, this.alias, this.childEnv(helper.env), this.label);
      if (gen !== this.generation) return;
      await this.startMaster(gen, helper.env, notes);
    } catch (err) {
      this.options.helper.unregister(sessionId);
      if (gen !== this.generation) return;
      this.fail(toAppError(err, SshErrorCode.CONNECT_FAILED));
    }
  }

  private knownHostsFile(): string {
    return this.target.knownHostsFile ?? join(this.options.homeDir ?? homedir(), '.ssh', 'known_hosts');
  }

  /** The known_hosts name of the target, from `ssh -G` when an OpenSSH config decides it. */
  private targetEndpoint(): string {
    const e = this._effective;
    const host = this.target.ssh.configHost ? (e?.['hostname'] ?? this.target.ssh.host) : this.target.ssh.host;
    const port = this.target.ssh.configHost ? Number(e?.['port'] ?? 22) : this.target.ssh.port;
    return knownHostsName(host, port);
  }

  private async startMaster(gen: number, helperEnv: Record<string, string>, notes: LoginQuestions): Promise<void> {
    // A master left by a console that was killed still holds its connection: tell it to go first.
    if (existsSync(this.controlPath)) await this.control(['-O', 'exit']).catch(() => undefined);
    rmSync(this.controlPath, { force: true });
    if (gen !== this.generation) return;
    return this.spawnMaster(gen, helperEnv, notes);
  }

  private spawnMaster(gen: number, helperEnv: Record<string, string>, notes: LoginQuestions): Promise<void> {
    const child = spawn(this.binary, ['-F', this.configPath, '-M', '-N', '-S', this.controlPath, '--', this.alias], {
      stdio: ['ignore', 'ignore', 'pipe'],
      env: this.childEnv(helperEnv),
    });
    this.master = child;
    let stderr = '';
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (d: string) => {
      if (stderr.length < STDERR_CAP) stderr += d;
    });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      child.once('error', (e) => {
        stderr += `\n${e.message}`;
      });
      child.once('close', (code, signal) => resolve({ code, signal }));
    });
    this.masterExited = exited.then(() => undefined);
    const hops = (this.target.ssh.jumpHost?.split(',').length ?? 0) + 1;
    const deadlineMs = (this.options.readyTimeoutMs ?? 15_000) * hops + 2_000;
    const started = this.clock.now();

    return new Promise<void>((resolve, reject) => {
      let settled = false;
      const settle = (err: AppError | null) => {
        if (settled) return;
        settled = true;
        void poll.dispose();
        if (err) reject(err);
        else resolve();
      };
      void exited.then(({ code, signal }) => {
        this.options.helper.unregister(`${this.stem}-${gen}`);
        if (this.master === child) {
          this.master = null;
          // Its command shell went with it (a command on it fails); the next master gets a new one.
          void this.shell?.dispose(new AppError(SshErrorCode.EXEC_FAILED, `${this.label}: the command did not finish: the SSH connection was lost`, { retryable: true }));
          this.shell = null;
        }
        if (!settled) {
          settle(this.attemptFailure(notes, stderr, code, signal));
          return;
        }
        // The link was up and the master went: reconnect, as on a lost ssh2 connection.
        if (gen !== this.generation) return;
        this.forwards = new Map();
        const why = lastLines(stderr);
        this.scheduleRetry(new AppError(SshErrorCode.DISCONNECTED, `${this.label}: the SSH connection was lost${why ? ` (${why})` : ''}`, { retryable: true }));
      });
      // The control socket appears once ssh has authenticated and listens for clients; `-O check` confirms it answers.
      let checking = false;
      const poll = this.clock.setInterval(() => {
        if (settled || checking) return;
        if (gen !== this.generation) {
          settle(new AppError(SshErrorCode.CANCELLED, 'superseded'));
          return;
        }
        // While the operator is asked something, the deadline waits with ssh.
        if (notes.pendingPrompt) return;
        if (this.clock.now() - Math.max(started, notes.answeredAt) > deadlineMs) {
          child.kill('SIGKILL');
          settle(new AppError(SshErrorCode.TIMEOUT, `${targetWhere(this.target)}: no SSH connection within ${deadlineMs} ms`, { retryable: true }));
          return;
        }
        if (!existsSync(this.controlPath)) return;
        checking = true;
        this.control(['-O', 'check']).then(
          () => {
            checking = false;
            if (settled) return;
            settle(null);
            this.adopt(gen);
          },
          () => {
            checking = false;
          },
        );
      }, 25);
    });
  }

  private attemptFailure(notes: LoginQuestions, stderr: string, code: number | null, signal: NodeJS.Signals | null): AppError {
    if (notes.hostKeyError) {
      this._problem = notes.problem;
      return notes.hostKeyError;
    }
    if (notes.credentialError) return notes.credentialError;
    const where = targetWhere(this.target);
    if (/REMOTE HOST IDENTIFICATION HAS CHANGED/.test(stderr)) {
      return new AppError(SshErrorCode.HOST_KEY_CHANGED, `${where}: HOST KEY CHANGED (known_hosts): ${lastLines(stderr)}`, { details: { stderr: lastLines(stderr) } });
    }
    if (/Host key verification failed/.test(stderr)) {
      return new AppError(SshErrorCode.HOST_KEY_UNKNOWN, `${where}: ssh refused the host key: ${lastLines(stderr)}`, { details: { stderr: lastLines(stderr) } });
    }
    const known = classifyStderr(stderr, where);
    const exit = signal ? `signal ${signal}` : `exit ${code}`;
    // A ProxyCommand that fails may leave ssh with nothing to say (1 run in 30 here): either way it ended first.
    if (this.target.ssh.proxyCommand && (!known || known.code === SshErrorCode.CONNECT_FAILED)) {
      return new AppError(SshErrorCode.CONNECT_FAILED, `${where}: the ProxyCommand ended before SSH started (${known?.message ?? `ssh ${exit}`})`, { retryable: true, details: { exit } });
    }
    if (known) return known;
    return new AppError(SshErrorCode.CONNECT_FAILED, `${where}: ssh ended (${exit})${stderr.trim() ? `: ${lastLines(stderr)}` : ''}`, { retryable: true, details: { exit } });
  }

  /** A control command to the master (`-O check`, `-O forward …`, `-O exit`). */
  private control(args: string[]): Promise<string> {
    return new Promise((resolve, reject) => {
      execFile(this.binary, ['-F', this.configPath, '-S', this.controlPath, ...args, '--', this.alias], { timeout: 10_000, env: this.childEnv({}) }, (err, stdout, stderr) => {
        if (err) reject(new AppError(SshErrorCode.FORWARD_FAILED, `${this.label}: ssh ${args.join(' ')}: ${lastLines(stderr) || err.message}`, { retryable: true, details: { stderr: lastLines(stderr) } }));
        else resolve(`${stdout}${stderr}`);
      });
    });
  }

  private async addForward(dstHost: string, dstPort: number): Promise<string> {
    const path = join(this.options.controlDir, `${this.stem}-${++this.forwardCount}.fw`);
    assertSocketPath(path, this.label);
    rmSync(path, { force: true });
    const host = dstHost.includes(':') ? `[${dstHost}]` : dstHost;
    await this.control(['-O', 'forward', '-L', `${path}:${host}:${dstPort}`]);
    return path;
  }

  /**
   * The master listens on a tunnel's private socket (see MasterForward); the generated config's
   * StreamLocalBindMask 0177 makes it 0600 and StreamLocalBindUnlink replaces a file left there.
   */
  async masterListen(socketPath: string, dstHost: string, dstPort: number): Promise<void> {
    this.requireConnected();
    assertSocketPath(socketPath, this.label);
    await this.control(['-O', 'forward', '-L', masterSpec(socketPath, dstHost, dstPort)]);
  }

  async masterUnlisten(socketPath: string, dstHost: string, dstPort: number): Promise<void> {
    if (!this.master) return;
    await this.control(['-O', 'cancel', '-L', masterSpec(socketPath, dstHost, dstPort)]);
  }

  private adopt(gen: number): void {
    if (gen !== this.generation) return;
    this.forwards = new Map();
    this.becameConnected();
  }

  protected dropLink(): Promise<void> {
    return this.stopMaster();
  }

  private async stopMaster(): Promise<void> {
    this.login?.close();
    const shell = this.shell;
    this.shell = null;
    await shell?.dispose();
    const child = this.master;
    const exited = this.masterExited;
    this.master = null;
    this.masterExited = null;
    this.forwards = new Map();
    if (child && exited) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const killer = this.clock.setTimeout(() => child.kill('SIGKILL'), 2_000);
      await exited;
      void killer.dispose();
    }
    rmSync(this.controlPath, { force: true });
    for (let i = 1; i <= this.forwardCount; i++) rmSync(join(this.options.controlDir, `${this.stem}-${i}.fw`), { force: true });
  }
}

function masterSpec(socketPath: string, dstHost: string, dstPort: number): string {
  return `${socketPath}:${dstHost.includes(':') ? `[${dstHost}]` : dstHost}:${dstPort}`;
}
