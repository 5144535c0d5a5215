import { join } from 'node:path';

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
