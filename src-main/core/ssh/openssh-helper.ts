// The way back from a running `ssh` to the console. OpenSSH asks two things
// of programs it runs: KnownHostsCommand ("which keys do you know for this
// host?") and SSH_ASKPASS ("the passphrase for this key?"). Both run one
// small helper script, which forwards the question over a Unix socket in the
// control folder to this server and prints the console's answer. So host-key
// trust is the console's verdict (known_hosts plus the operator's
// confirmations), decided before ssh offers any credential, and a passphrase
// comes from what the operator typed into the console: never a terminal,
// never stored on disk.
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { AppError, silentLogger, type Disposable, type Logger } from '../base/index.js';
import { SshErrorCode } from './errors.js';

export type HelperQuestion =
  | { kind: 'hostkey'; /** known_hosts name ssh looks up: `host` or `[host]:port`. */ name: string; keyType: string; /** base64 key blob. */ key: string }
  | { kind: 'askpass'; prompt: string };

export type HelperAnswer = { lines: string[] } | { secret: string } | { cancel: string };

export type HelperHandler = (question: HelperQuestion) => HelperAnswer | Promise<HelperAnswer>;

/** What a spawned ssh needs in its environment to reach this server for one session. */
export interface HelperEnv {
  env: Record<string, string>;
  /** The helper program, for KnownHostsCommand and SSH_ASKPASS. */
  program: string;
}

const MAX_REQUEST_BYTES = 64 * 1024;

/**
 * The helper itself: plain Node (CommonJS, no dependencies), started by ssh
 * with the question in argv. It exits 0 with the answer on stdout, or 1 (ssh
 * then treats the prompt as cancelled, or the host as having no known key).
 */
const HELPER_SOURCE = `'use strict';
const net = require('node:net');
const [, , mode, ...args] = process.argv;
const env = process.env;
let question;
if (mode === 'hostkey') {
  const [reason, name, keyType, key] = args;
  // ssh asks once to order its host-key algorithms (no key yet): nothing to say.
  if (reason === 'ORDER' || !key || key === 'NONE') process.exit(0);
  question = { kind: 'hostkey', name, keyType, key };
} else {
  question = { kind: 'askpass', prompt: args.join(' ') };
}
const sock = net.connect(env.GC_SSH_HELPER_SOCK);
let buf = '';
sock.setEncoding('utf8');
sock.on('data', (d) => { buf += d; });
sock.on('error', () => process.exit(1));
sock.on('end', () => {
  let a;
  try { a = JSON.parse(buf); } catch { process.exit(1); }
  if (a && Array.isArray(a.lines)) { process.stdout.write(a.lines.map((l) => l + '\\n').join('')); process.exit(0); }
  if (a && typeof a.secret === 'string') { process.stdout.write(a.secret + '\\n'); process.exit(0); }
  process.exit(1);
});
sock.end(JSON.stringify({ token: env.GC_SSH_HELPER_TOKEN, session: env.GC_SSH_HELPER_SESSION, question }));
`;

/** Shell-safe single-quoting for the wrapper script. */
function sq(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * One per console: the socket, the helper script, and the sessions that may
 * ask (each by an id it was given). A request with the wrong token or an
 * unknown session id gets no answer.
 */
export class OpenSshHelperServer implements Disposable {
  private server: Server | null = null;
  private starting: Promise<void> | null = null;
  private readonly token = randomBytes(24).toString('hex');
  private readonly handlers = new Map<string, HelperHandler>();
  private readonly logger: Logger;
  private readonly nodePath: string;
  readonly socketPath: string;
  readonly program: string;

  constructor(
    readonly dir: string,
    options: { logger?: Logger; nodePath?: string } = {},
  ) {
    this.logger = (options.logger ?? silentLogger).child('ssh-helper');
    this.socketPath = join(dir, 'helper.sock');
    this.program = join(dir, 'gc-ssh-helper');
    this.nodePath = options.nodePath ?? process.execPath;
  }

  /** Registers a session's handler; the env its ssh processes need to reach it. */
  async register(id: string, handler: HelperHandler): Promise<HelperEnv> {
    await this.start();
    this.handlers.set(id, handler);
    return {
      program: this.program,
      env: {
        GC_SSH_HELPER_SOCK: this.socketPath,
        GC_SSH_HELPER_TOKEN: this.token,
        GC_SSH_HELPER_SESSION: id,
        SSH_ASKPASS: this.program,
        SSH_ASKPASS_REQUIRE: 'force',
        // Electron's binary runs the script as plain Node with this set.
        ELECTRON_RUN_AS_NODE: '1',
      },
    };
  }

  unregister(id: string): void {
    this.handlers.delete(id);
  }

  private start(): Promise<void> {
    this.starting ??= this.listen();
    return this.starting;
  }

  private async listen(): Promise<void> {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    chmodSync(this.dir, 0o700);
    writeFileSync(join(this.dir, 'gc-ssh-helper.cjs'), HELPER_SOURCE, { mode: 0o600 });
    // ssh runs the program directly with its arguments: a wrapper names our Node and the script.
    // SSH_ASKPASS gets the prompt as its only argument; KnownHostsCommand passes "hostkey" first.
    writeFileSync(
      this.program,
      `#!/bin/sh\nif [ "$1" = hostkey ]; then exec ${sq(this.nodePath)} ${sq(join(this.dir, 'gc-ssh-helper.cjs'))} "$@"; fi\nexec ${sq(this.nodePath)} ${sq(join(this.dir, 'gc-ssh-helper.cjs'))} askpass "$@"\n`,
      { mode: 0o700 },
    );
    // The helper half-closes after its question; the answer goes back on the still-open half.
    const server = createServer({ allowHalfOpen: true }, (sock) => this.serve(sock));
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err) =>
        reject(new AppError(SshErrorCode.OPENSSH_HELPER_FAILED, `cannot listen on ${this.socketPath}: ${err.message}`, { cause: err, details: { path: this.socketPath } })),
      );
      // A socket left by an earlier run of this console (same folder) is ours to replace.
      rmSync(this.socketPath, { force: true });
      server.listen(this.socketPath, () => {
        chmodSync(this.socketPath, 0o600);
        resolve();
      });
    });
    this.server = server;
  }

  private serve(sock: Socket): void {
    let buf = '';
    sock.setEncoding('utf8');
    sock.on('error', () => sock.destroy());
    sock.on('data', (d: string) => {
      buf += d;
      if (buf.length > MAX_REQUEST_BYTES) sock.destroy();
    });
    sock.on('end', () => {
      void this.answer(buf).then((answer) => sock.end(JSON.stringify(answer)), () => sock.end('{}'));
    });
  }

  private async answer(text: string): Promise<HelperAnswer | Record<string, never>> {
    let req: { token?: unknown; session?: unknown; question?: HelperQuestion };
    try {
      req = JSON.parse(text) as typeof req;
    } catch {
      return {};
    }
    if (req.token !== this.token || typeof req.session !== 'string') return {};
    const handler = this.handlers.get(req.session);
    const q = req.question;
    if (!handler || !q || (q.kind !== 'hostkey' && q.kind !== 'askpass')) return {};
    try {
      return await handler(q);
    } catch (err) {
      this.logger.warn('helper question failed', { kind: q.kind, message: (err as Error).message });
      return { cancel: (err as Error).message };
    }
  }

  async dispose(): Promise<void> {
    this.handlers.clear();
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
