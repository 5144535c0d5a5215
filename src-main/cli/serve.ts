import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createApi } from '../core/api.js';
import { startApp, type App } from '../core/app.js';
import { AppError, createLogger, type LogLevel, type Logger } from '../core/base/index.js';
import { defaultConfigPath } from '../core/config/index.js';
import { DEFAULT_DEMO_FAULTS, DEMO_CONFIG_REASON, demoFaultsOf, startDemoFleet, syntheticProfiles, type DemoFault, type DemoFleet } from '../demo/index.js';
import { findRunningConsole, prepareDataDir, readyFilePath, removeReadyFile, writeReadyFile, type ReadyInfo } from '../core/instance/index.js';
import { startWebBridge } from '../web/index.js';
import { CliErrorCode } from './errors.js';
import { EXIT, UsageError, logLine, type Output } from './output.js';
import { createSignalHandler, endChildProcesses, pendingWork } from './shutdown.js';
import { VERSION } from './version.js';

import { ChromiumPdfPrinter } from '../web/index.js';

/** The largest `--demo-hosts` fleet (each host is an SSH server and two simulators in this process). */
export const MAX_DEMO_HOSTS = 128;

export interface ServeOptions {
  demo: boolean;
  /** Background application traffic on the demo fleet (on by default; tests turn it off). */
  demoTraffic: boolean;
  /** Divides the demo fleet's sleep / wake / restart durations (tests); default 1. */
  demoTimeScale?: number;
  /** N synthetic demo hosts (8 GPUs, 2 services each) instead of the built-in three. */
  demoHosts?: number;
  /** The demo hosts' SSH transport (the fleet default of the demo config). */
  demoSshTransport?: 'builtin' | 'openssh' | 'auto';
  /** Demo fault knobs (--demo-fault); absent: the built-in fleet's defaults (none for --demo-hosts). */
  demoFaults?: readonly DemoFault[];
  configFile: string | null;
  dataDir: string;
  uiPort: number;
  proxyPort: number | undefined;
  readyFile: string | null;
  logLevel: LogLevel;
  /**
   * Print the UI URL with its token in the ready line. Off by default unless stdout is a terminal:
   * stdout is often captured by a log file or journald, and the token opens the whole console.
   */
  printUrl?: boolean;
}

/** `--demo-fault` values, checked (a usage error names the form); absent: undefined (the fleet's defaults). */
export function demoFaultFlags(specs: string | string[] | undefined): DemoFault[] | undefined {
  if (specs === undefined) return undefined;
  try {
    return demoFaultsOf(typeof specs === 'string' ? [specs] : specs, []);
  } catch (err) {
    throw new UsageError(`--demo-fault: ${(err as Error).message}`);
  }
}

/** The UI URL without its token: what a log may hold. */
export function redactedUiUrl(url: string): string {
  const hash = url.indexOf('#');
  return hash >= 0 ? url.slice(0, hash) : url;
}

/** The built renderer: beside the built CLI (out/main → out/renderer), or from the repo when run from source. */
export function findRendererDir(): string {
  const fromEnv = process.env.GPU_CONSOLE_RENDERER_DIR;
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [fromEnv, resolve(here, '../renderer'), resolve(here, '../../out/renderer')].filter(
    (c): c is string => typeof c === 'string',
  );
  for (const dir of candidates) if (existsSync(join(dir, 'index.html'))) return dir;
  throw new AppError(CliErrorCode.RENDERER_NOT_BUILT, 'the UI is not built: run `npm run build` first');
}

/** The demo fleet, when asked for (--demo, --demo-hosts) or when there is no config file; it runs in this process. */
async function startDemoIfWanted(options: ServeOptions, logger: Logger): Promise<DemoFleet | null> {
  if (!options.demo && (options.configFile !== null || existsSync(defaultConfigPath(options.dataDir)))) return null;
  return startDemoFleet({
    dir: join(options.dataDir, 'demo'),
    logger: logger.child('demo'),
    timeScale: options.demoTimeScale,
    ...(options.demoSshTransport ? { sshTransport: options.demoSshTransport } : {}),
    faults: options.demoFaults ?? (options.demoHosts !== undefined ? [] : DEFAULT_DEMO_FAULTS),
    ...(options.demoHosts !== undefined ? { profiles: syntheticProfiles(options.demoHosts, { labelPrefix: 'demo' }) } : {}),
  });
}

/** The core on the config file, or on the demo fleet's config with its traffic (half through the proxy) once the proxy is up. */
async function startCore(options: ServeOptions, logger: Logger): Promise<{ app: App; demo: DemoFleet | null }> {
  const demo = await startDemoIfWanted(options, logger);
  try {
    const app = await startApp({
      mode: 'web',
      version: VERSION,
      dataDir: options.dataDir,
      configFile: options.configFile,
      ...(demo ? { givenConfig: { config: demo.config, reason: DEMO_CONFIG_REASON } } : {}),
      proxyPort: options.proxyPort,
      logger,
      // Headless, report PDFs are printed by a local Chromium/Chrome (GPU_CONSOLE_CHROMIUM or a standard path).
      pdfPrinter: new ChromiumPdfPrinter(),
    });
    if (demo && options.demoTraffic) await demo.startTrafficThrough(app.proxy);
    return { app, demo };
  } catch (err) {
    await demo?.dispose();
    throw err;
  }
}

export async function serve(options: ServeOptions, output: Output): Promise<number> {
  const logger = createLogger({ level: options.logLevel, scope: 'gpu-console', write: logLine });
  const running = findRunningConsole(options.dataDir);
  if (running) {
    output.err(`gpu-console: another console (pid ${running.pid}) already uses data dir ${options.dataDir}; its UI: ${running.ui.split('#')[0]}`);
    return EXIT.FAILED;
  }
  prepareDataDir(options.dataDir, logger);
  const rendererDir = findRendererDir();

  const { app, demo } = await startCore(options, logger);
  const api = createApi(app, logger.child('api'));
  let bridge;
  try {
    bridge = await startWebBridge({ api, rendererDir, port: options.uiPort, logger: logger.child('web') });
  } catch (err) {
    await api.dispose();
    await app.dispose();
    await demo?.dispose();
    throw new AppError(CliErrorCode.UI_PORT_UNAVAILABLE, `cannot listen on 127.0.0.1:${options.uiPort}: ${(err as Error).message}`, { cause: err });
  }

  const info: ReadyInfo = { ui: bridge.url, proxy: app.info().proxyUrl, pid: process.pid };
  const dataDirReady = readyFilePath(options.dataDir);
  writeReadyFile(dataDirReady, info);
  if (options.readyFile) writeReadyFile(resolve(options.readyFile), info);
  const showToken = options.printUrl ?? process.stdout.isTTY === true;
  const ui = showToken ? info.ui : redactedUiUrl(info.ui);
  const where = showToken ? '' : ` (the token is in ${dataDirReady}; \`gpu-console url\` prints the full URL)`;
  return await new Promise<number>((resolveExit) => {
    const readyFiles = [dataDirReady, ...(options.readyFile ? [resolve(options.readyFile)] : [])];
    const onSignal = createSignalHandler(
      {
        graceful: async () => {
          await bridge.close();
          await api.dispose();
          await app.dispose();
          await demo?.dispose();
          for (const f of readyFiles) removeReadyFile(f, process.pid);
        },
        // Synchronous only: better-sqlite3 finished every write it began (writes are synchronous), so closing
        // checkpoints the WAL; the children (ssh masters, shells) would otherwise outlive this process.
        immediate: () => {
          endChildProcesses();
          try {
            app.store.close();
          } catch (err) {
            logger.warn('could not close the database on the way out; SQLite recovers its WAL at the next start', { error: (err as Error).message });
          }
          for (const f of readyFiles) removeReadyFile(f, process.pid);
        },
        pending: () => pendingWork(app),
        graceMs: app.config.current.proxy.shutdownGraceMs,
        say: (line) => output.err(`gpu-console: ${line}`),
        exit: (code) => process.exit(code),
      },
      resolveExit,
    );
    process.on('SIGINT', () => onSignal('SIGINT'));
    process.on('SIGTERM', () => onSignal('SIGTERM'));
    // Ready is announced only once the signals are ours: a Ctrl-C sent on seeing this line must reach stop().
    if (output.json) output.out(JSON.stringify({ event: 'ready', ...info, ui, tokenIn: showToken ? null : dataDirReady, demo: demo !== null }));
    else output.out(`GPU Console ready ui=${ui}${info.proxy ? ` proxy=${info.proxy}` : ''}${where}`);
  });
}
