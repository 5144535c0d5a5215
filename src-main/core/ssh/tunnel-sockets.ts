// Where the tunnels' private ends live: Unix sockets in one folder of the
// console's own (mode 0700, owned by this user), so no other local user can
// connect to them, whatever the socket's own mode. The console's listener and
// OpenSSH's master take turns on the same path; a socket file left behind by a
// master that died is removed, and only inside this folder.
import { randomBytes } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, unlinkSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { AppError, silentLogger, type Logger } from '../base/index.js';
import { SshErrorCode } from './errors.js';
import { MAX_SOCKET_PATH_BYTES } from './openssh-config.js';

/** `<16 hex>.sock`: what a socket's name adds to the folder's path. */
const NAME_BYTES = 1 + 16 + '.sock'.length;

export interface TunnelSocketsOptions {
  /** The preferred folder (the data dir's `tunnels/`); null or too long for a socket path: a new folder under the OS temp dir. */
  preferredDir: string | null;
  logger?: Logger;
  /** Default process.platform. On Windows the private ends are named pipes (libuv has no Unix sockets by path there). */
  platform?: NodeJS.Platform;
}

/** True when `dir` is a real folder (no link) of this user that nobody else may enter. */
function isPrivateDir(dir: string): boolean {
  const st = lstatSync(dir, { throwIfNoEntry: false });
  if (!st || !st.isDirectory()) return false;
  const uid = process.getuid?.();
  return (uid === undefined || st.uid === uid) && (st.mode & 0o077) === 0;
}

export class TunnelSockets {
  private folder: string | null = null;
  /** The folder is a temporary one of ours: removed on dispose. */
  private temporary = false;
  private readonly logger: Logger;

  constructor(private readonly options: TunnelSocketsOptions) {
    this.logger = (options.logger ?? silentLogger).child('tunnel-sockets');
  }

  /** The folder (made on first use). */
  get dir(): string {
    this.folder ??= this.makeFolder();
    return this.folder;
  }

  /**
   * A fresh socket path in the folder, nothing there yet. On Windows a named pipe under an unguessable
   * name instead: its default ACL lets other users read but not open it for writing, and it goes with
   * the process that made it.
   */
  allocate(): string {
    if ((this.options.platform ?? process.platform) === 'win32') return `\\\\?\\pipe\\gpu-console-tunnel-${randomBytes(16).toString('hex')}`;
    const path = join(this.dir, `${randomBytes(8).toString('hex')}.sock`);
    if (Buffer.byteLength(path) > MAX_SOCKET_PATH_BYTES) {
      throw new AppError(SshErrorCode.FORWARD_LISTEN_FAILED, `the tunnel socket path ${path} is longer than a Unix socket allows (${MAX_SOCKET_PATH_BYTES} bytes)`, {
        details: { path },
      });
    }
    return path;
  }

  /** Removes a socket file of this folder (a tunnel closed, or a master left it); anything else is left alone. */
  remove(path: string): void {
    if (!this.owns(path)) return;
    const st = lstatSync(path, { throwIfNoEntry: false });
    if (st?.isSocket()) rmSync(path, { force: true });
  }

  /**
   * A socket file at `path` that nobody listens on (a dead master's) is removed, so the path can be
   * bound again. True when it was removed (or nothing was there); false when something answers on it.
   */
  reclaimStale(path: string): Promise<boolean> {
    if (!this.owns(path)) return Promise.resolve(false);
    const st = lstatSync(path, { throwIfNoEntry: false });
    if (!st) return Promise.resolve(true);
    if (!st.isSocket()) return Promise.resolve(false);
    return new Promise((resolve) => {
      const probe = connect(path);
      probe.once('connect', () => {
        probe.destroy();
        resolve(false);
      });
      probe.once('error', (err: NodeJS.ErrnoException) => {
        if (err.code !== 'ECONNREFUSED' && err.code !== 'ENOENT') return resolve(false);
        try {
          unlinkSync(path);
        } catch {
          // gone meanwhile
        }
        resolve(true);
      });
    });
  }

  /** Socket files left by an earlier console that crashed (nobody listens on them) are removed. */
  async sweep(): Promise<number> {
    let removed = 0;
    for (const name of readdirSync(this.dir)) {
      if (name.endsWith('.sock') && (await this.reclaimStale(join(this.dir, name)))) removed++;
    }
    return removed;
  }

  dispose(): void {
    if (this.folder && this.temporary) rmSync(this.folder, { recursive: true, force: true });
    this.folder = null;
  }

  private owns(path: string): boolean {
    return this.folder !== null && dirname(path) === this.folder;
  }

  private makeFolder(): string {
    const preferred = this.options.preferredDir;
    // A `:` would split OpenSSH's `-L path:host:port`.
    if (preferred !== null && Buffer.byteLength(preferred) + NAME_BYTES <= MAX_SOCKET_PATH_BYTES && !preferred.includes(':')) {
      try {
        mkdirSync(preferred, { recursive: true, mode: 0o700 });
        const st = lstatSync(preferred);
        if (st.isDirectory() && st.uid === process.getuid?.()) chmodSync(preferred, 0o700);
        if (isPrivateDir(preferred)) return preferred;
        this.logger.warn('the tunnel socket folder is not private to this user; using a temporary one', { dir: preferred });
      } catch (err) {
        this.logger.warn('cannot make the tunnel socket folder; using a temporary one', { dir: preferred, message: (err as Error).message });
      }
    } else if (preferred !== null) {
      this.logger.info('the data folder is too deep for Unix socket paths (or holds a colon); tunnel sockets go to a temporary folder', { dir: preferred });
    }
    // mkdtemp makes a new folder of ours with mode 0700, under a name nobody could have made first.
    const base = Buffer.byteLength(join(tmpdir(), 'gct-XXXXXX')) + NAME_BYTES <= MAX_SOCKET_PATH_BYTES ? tmpdir() : '/tmp';
    const dir = mkdtempSync(join(base, 'gct-'));
    this.temporary = true;
    if (!isPrivateDir(dir)) throw new AppError(SshErrorCode.FORWARD_LISTEN_FAILED, `the temporary tunnel folder ${dir} is not private to this user`, { details: { dir } });
    return dir;
  }
}
