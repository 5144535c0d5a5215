// better-sqlite3 is a native module: `npm ci` builds it for plain Node (tests,
// `gpu-console serve`), but the desktop app runs under Electron's Node ABI.
// Rather than rebuilding node_modules (which would break the Node side), the
// desktop app builds a second copy for Electron's ABI on first start, keeps it
// in the user-data folder and hands its path to better-sqlite3's
// `nativeBinding` option. A packaged app ships an Electron build already.
// No Electron import here: the shell passes versions in, so this is testable.
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { AppError, type Logger } from '../core/base/index.js';
import { StoreErrorCode } from '../core/store/index.js';

export interface ElectronRuntime {
  electronVersion: string;
  /** process.versions.modules under Electron (the ABI number). */
  abi: string;
  platform: NodeJS.Platform;
  arch: string;
}

export function betterSqlitePackageDir(): string {
  const require = createRequire(import.meta.url);
  return dirname(require.resolve('better-sqlite3/package.json'));
}

export function bindingCachePath(cacheDir: string, packageVersion: string, rt: ElectronRuntime): string {
  return join(cacheDir, 'native', `better-sqlite3-${packageVersion}-electron-v${rt.abi}-${rt.platform}-${rt.arch}`, 'better_sqlite3.node');
}

/** The two ways to get an Electron-ABI build, tried in order: a published prebuild, then a local compile. */
export function buildCommands(packageDir: string, rt: ElectronRuntime): { label: string; args: string[] }[] {
  const require = createRequire(join(packageDir, 'package.json'));
  const resolveBin = (pkg: string, bin: string) => join(dirname(require.resolve(`${pkg}/package.json`)), bin);
  const commands: { label: string; args: string[] }[] = [];
  try {
    commands.push({
      label: 'prebuild-install (download a published Electron build)',
      args: [resolveBin('prebuild-install', 'bin.js'), '--runtime', 'electron', '--target', rt.electronVersion, '--arch', rt.arch, '--platform', rt.platform],
    });
  } catch {
    // prebuild-install not installed: go straight to compiling.
  }
  try {
    commands.push({
      label: 'node-gyp (compile against Electron headers)',
      args: [
        resolveBin('node-gyp', 'bin/node-gyp.js'),
        'rebuild',
        '--release',
        '--runtime=electron',
        `--target=${rt.electronVersion}`,
        `--arch=${rt.arch}`,
        '--dist-url=https://electronjs.org/headers',
      ],
    });
  } catch {
    // node-gyp not resolvable from better-sqlite3: fall back to npm's copy below.
    commands.push({
      label: 'npx node-gyp (compile against Electron headers)',
      args: ['--', 'npx', 'node-gyp', 'rebuild', '--release', '--runtime=electron', `--target=${rt.electronVersion}`, '--dist-url=https://electronjs.org/headers'],
    });
  }
  return commands;
}

function run(nodePath: string, args: string[], cwd: string, logger: Logger): Promise<boolean> {
  return new Promise((resolveRun) => {
    const viaNpx = args[0] === '--';
    const child = viaNpx
      ? spawn(args[1]!, args.slice(2), { cwd, stdio: ['ignore', 'pipe', 'pipe'], shell: process.platform === 'win32' })
      : spawn(nodePath, args, { cwd, env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let tail = '';
    const keep = (chunk: Buffer) => {
      tail = (tail + chunk.toString('utf8')).slice(-4000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', () => resolveRun(false));
    child.on('close', (code) => {
      if (code !== 0) logger.warn('native build step failed', { code, output: tail });
      resolveRun(code === 0);
    });
  });
}

/**
 * Returns the path of an Electron-ABI better_sqlite3.node, building it into
 * `cacheDir` the first time. Throws STORE_NATIVE_BINDING_UNAVAILABLE with what
 * was tried when neither a prebuild nor a compile works.
 */
export async function ensureElectronSqliteBinding(options: {
  cacheDir: string;
  runtime: ElectronRuntime;
  nodePath: string;
  logger: Logger;
  packageDir?: string;
}): Promise<string> {
  const packageDir = options.packageDir ?? betterSqlitePackageDir();
  const pkg = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { version: string };
  const target = bindingCachePath(options.cacheDir, pkg.version, options.runtime);
  if (existsSync(target)) return target;

  options.logger.info('building better-sqlite3 for Electron (first start only)', { target });
  const work = mkdtempSync(join(tmpdir(), 'gpu-console-sqlite-'));
  const tried: string[] = [];
  try {
    cpSync(packageDir, work, { recursive: true, filter: (src) => !src.includes(`${join(packageDir, 'build')}`) });
    for (const command of buildCommands(packageDir, options.runtime)) {
      tried.push(command.label);
      if (await run(options.nodePath, command.args, work, options.logger)) {
        const built = join(work, 'build', 'Release', 'better_sqlite3.node');
        if (existsSync(built)) {
          mkdirSync(dirname(target), { recursive: true });
          const tmp = `${target}.tmp`;
          cpSync(built, tmp);
          renameSync(tmp, target);
          return target;
        }
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  throw new AppError(
    StoreErrorCode.NATIVE_BINDING_UNAVAILABLE,
    `could not get better-sqlite3 for Electron ${options.runtime.electronVersion} (ABI ${options.runtime.abi}); tried: ${tried.join(', ')}. ` +
      'Check network access to the Electron headers, or run the console headless with `gpu-console serve`.',
    { details: { tried } },
  );
}
