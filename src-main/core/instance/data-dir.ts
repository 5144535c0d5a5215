import { chmodSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { AppError, type Logger } from '../base/index.js';
import { InstanceErrorCode } from './errors.js';

/**
 * The platform's user-data folder for GPU Console — the same folder the
 * desktop app uses (the shell points Electron's userData at it), so the CLI
 * and the app share one database. `GPU_CONSOLE_DATA_DIR` overrides it.
 */
export function defaultDataDir(env: NodeJS.ProcessEnv, platform: NodeJS.Platform, home: string): string {
  if (env.GPU_CONSOLE_DATA_DIR) return env.GPU_CONSOLE_DATA_DIR;
  if (platform === 'darwin') return join(home, 'Library', 'Application Support', 'GPU Console');
  if (platform === 'win32') return join(env.APPDATA ?? join(home, 'AppData', 'Roaming'), 'GPU Console');
  return join(env.XDG_CONFIG_HOME ?? join(home, '.config'), 'gpu-console');
}

/**
 * Makes the data folder, or tightens an existing one to 0700: it holds the audit log and request records,
 * the secrets file, ready.json with the UI's token, and the ssh control sockets, which other local users
 * must not reach. An older folder made 0755 (by hand, by a tool, by an earlier version) is tightened at
 * start, and the log says so. The files in it are the store's, the secret store's and the ready file's to
 * create 0600; this folder's mode is what guards them all at once.
 */
export function prepareDataDir(dir: string, logger: Logger, platform: NodeJS.Platform = process.platform): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const st = statSync(dir);
    if (!st.isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
    // Windows keeps no Unix modes; its user-profile folder (APPDATA) is the user's alone already.
    if (platform === 'win32') return;
    const mode = st.mode & 0o777;
    if (mode === 0o700) return;
    chmodSync(dir, 0o700);
    logger.warn('data folder tightened', { dir, was: mode.toString(8).padStart(4, '0'), now: '0700' });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'EIO';
    throw new AppError(InstanceErrorCode.DATA_DIR_UNUSABLE, `the data folder ${dir} cannot be made private to this user (${code})`, { details: { dir, reason: code }, cause: err });
  }
}
