// The Electron main process: single instance, locked-down window, app://
// protocol, ipcMain bound to the contract through core/api with sender checks
// (a call sent with an id can be aborted by IPC_CANCEL from the same page;
// the window's delta-coded ticks restart from a keyframe on IPC_RESYNC).
// All behaviour lives in core; this file only adapts Electron to it.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { BrowserWindow, app, dialog, ipcMain, type IpcMainInvokeEvent, type WebContents } from 'electron';
import { BridgeErrorCode, IPC_EVENT, IPC_INVOKE, isDeltaChannel, TickStreamEncoder, type InvokeResult } from '../../src-preload/contract/index.js';
import { IPC_CANCEL, IPC_RESYNC, isCallId } from '../../src-preload/contract/ipc.js';
import { createApi, type Api } from '../core/api.js';
import { startApp, type App, type AppOptions } from '../core/app.js';
import { AppError, createLogger } from '../core/base/index.js';
import { defaultConfigPath } from '../core/config/index.js';
import { defaultDataDir } from '../core/instance/index.js';
import { VERSION } from '../core/instance/index.js';
import { DEMO_CONFIG_REASON, startDemoFleet, type DemoFleet } from '../demo/index.js';
import { APP_ORIGIN, handleAppProtocol, registerAppScheme } from './protocol.js';
import { electronNotifier } from './notifier.js';
import { keychainSecretStore } from './secrets.js';
import { createTray } from './tray.js';
import { ensureElectronSqliteBinding } from './sqlite-binding.js';
import { createMainWindow, lockDownSessions } from './window.js';
import { ElectronPdfPrinter } from './pdf-printer.js';
import { nativeFilePicker } from './file-picker.js';

// Short-lived proxy objects must not be pretenured into the old generation (see bin/gpu-console.js).
setFlagsFromString('--no-allocation-site-pretenuring');
// Full GCs at 1.3 × the live heap, not ~2–3 ×: a flat, smaller RSS at fleet scale (see bin/gpu-console.js).
setFlagsFromString('--heap-growing-percent=30');

const logger = createLogger({ level: 'info', scope: 'shell' });

function isTrustedSender(event: Pick<IpcMainInvokeEvent, 'sender' | 'senderFrame'>, trusted: WebContents | null): boolean {
  const frame = event.senderFrame;
  return trusted !== null && event.sender === trusted && frame !== null && frame.url.startsWith(`${APP_ORIGIN}/`);
}

/** Cancellable calls in flight at once; one more is refused (retryable) rather than left uncancellable. */
const MAX_CANCELLABLE_CALLS = 256;

function refused(code: string, message: string, retryable = false): InvokeResult<unknown> {
  return { ok: false, error: { code, message, retryable, details: {} } };
}

/**
 * The abort controller of each call the renderer sent with an id, until it
 * settles: IPC's counterpart of the web bridge closing a call's connection.
 */
class CancellableCalls {
  private readonly calls = new Map<string, { senderId: number; controller: AbortController }>();

  run(senderId: number, callId: string, work: (signal: AbortSignal) => Promise<InvokeResult<unknown>>): Promise<InvokeResult<unknown>> {
    if (this.calls.has(callId)) return Promise.resolve(refused(BridgeErrorCode.BAD_REQUEST, 'a call with this id is already in flight'));
    if (this.calls.size >= MAX_CANCELLABLE_CALLS) {
      return Promise.resolve(refused(BridgeErrorCode.BAD_REQUEST, `more than ${MAX_CANCELLABLE_CALLS} cancellable calls in flight`, true));
    }
    const controller = new AbortController();
    this.calls.set(callId, { senderId, controller });
    return work(controller.signal).finally(() => this.calls.delete(callId));
  }

  /** Only the page that sent the call can cancel it; unknown (settled) ids are ignored. */
  cancel(senderId: number, callId: string): void {
    const call = this.calls.get(callId);
    if (call?.senderId === senderId) call.controller.abort(new AppError(BridgeErrorCode.CANCELLED, 'the renderer cancelled the call'));
  }

  /** The page went away (reload, crash, closed): nobody waits for its answers any more. */
  cancelAllOf(senderId: number, why: string): void {
    for (const call of this.calls.values()) {
      if (call.senderId === senderId) call.controller.abort(new AppError(BridgeErrorCode.CANCELLED, why));
    }
  }
}

/**
 * The core on GPU_CONSOLE_CONFIG or <data dir>/config.yaml; with --demo, or when there is no such file, on
 * the demo fleet started here, whose background traffic (half through the proxy) starts once the proxy is up.
 */
async function startCore(dataDir: string, options: Pick<AppOptions, 'sqliteNativeBinding' | 'notifier'>): Promise<{ app: App; demo: DemoFleet | null }> {
  const configFile = process.env.GPU_CONSOLE_CONFIG ?? null;
  const wanted = process.argv.includes('--demo') || (configFile === null && !existsSync(defaultConfigPath(dataDir)));
  const demo = wanted ? await startDemoFleet({ dir: join(dataDir, 'demo'), logger: logger.child('demo') }) : null;
  try {
    const started = await startApp({
      mode: 'electron',
      version: VERSION,
      dataDir,
      configFile,
      ...(demo ? { givenConfig: { config: demo.config, reason: DEMO_CONFIG_REASON } } : {}),
      logger,
      secretStore: keychainSecretStore,
      pdfPrinter: new ElectronPdfPrinter(),
      filePicker: nativeFilePicker,
      ...options,
    });
    if (demo && !process.argv.includes('--demo-traffic=off')) await demo.startTrafficThrough(started.proxy);
    return { app: started, demo };
  } catch (err) {
    await demo?.dispose();
    throw err;
  }
}

export function runDesktop(): void {
  if (!app.requestSingleInstanceLock()) {
    app.quit();
    return;
  }
  const dataDir = defaultDataDir(process.env, process.platform, homedir());
  app.setPath('userData', dataDir);
  registerAppScheme();

  let core: { app: App; api: Api; demo: DemoFleet | null } | null = null;
  let contents: WebContents | null = null;

  app.on('second-instance', () => {
    const win = BrowserWindow.getAllWindows()[0];
    if (win) {
      if (win.isMinimized()) win.restore();
      win.focus();
    }
  });
  app.on('web-contents-created', (_e, wc) => {
    wc.on('will-attach-webview', (event) => event.preventDefault());
  });

  app
    .whenReady()
    .then(async () => {
      lockDownSessions();
      const outDir = fileURLToPath(new URL('..', import.meta.url));
      handleAppProtocol(join(outDir, 'renderer'));
      const nativeBinding = app.isPackaged
        ? undefined
        : await ensureElectronSqliteBinding({
            cacheDir: dataDir,
            runtime: { electronVersion: process.versions.electron ?? '', abi: process.versions.modules, platform: process.platform, arch: process.arch },
            nodePath: process.execPath,
            logger,
          });
      const { app: started, demo } = await startCore(dataDir, {
        sqliteNativeBinding: nativeBinding,
        notifier: electronNotifier((route) => core?.app.openRoute(route)),
      });
      const api = createApi(started, logger.child('api'));
      core = { app: started, api, demo };
      const calls = new CancellableCalls();
      ipcMain.handle(IPC_INVOKE, (event, channel: unknown, input: unknown, callId: unknown) => {
        if (!isTrustedSender(event, contents)) return refused(BridgeErrorCode.FORBIDDEN_SENDER, 'IPC from an untrusted frame');
        if (callId === undefined) return api.invoke(String(channel), input, { caller: 'ipc' });
        if (!isCallId(callId)) return refused(BridgeErrorCode.BAD_REQUEST, 'malformed call id');
        return calls.run(event.sender.id, callId, (signal) => api.invoke(String(channel), input, { caller: 'ipc', signal }));
      });
      ipcMain.on(IPC_CANCEL, (event, callId: unknown) => {
        if (isTrustedSender(event, contents) && isCallId(callId)) calls.cancel(event.sender.id, callId);
      });
      // One window, one stream: ticks go out as deltas against what this window was last sent.
      const ticks = new TickStreamEncoder();
      api.onEvent((e) => {
        if (contents && !contents.isDestroyed()) contents.send(IPC_EVENT, e.channel, ticks.encodeEvent(e.channel, e.payload));
      });
      ipcMain.on(IPC_RESYNC, (event, channel: unknown) => {
        if (isTrustedSender(event, contents) && isDeltaChannel(channel)) ticks.resync(channel);
      });
      const tray = createTray(
        join(app.getAppPath(), 'resources', 'icon.png'),
        () => started.attention(),
        (listener) =>
          started.onEvent((e) => {
            if (e.channel === 'alert.changed' || e.channel === 'action.changed') listener();
          }),
      );
      app.on('will-quit', () => void tray.dispose());
      const win = createMainWindow(join(outDir, 'preload'));
      contents = win.webContents;
      const pageId = contents.id;
      contents.on('did-navigate', () => {
        calls.cancelAllOf(pageId, 'the page was reloaded');
        ticks.resync(); // the new page holds no state
      });
      contents.on('render-process-gone', () => calls.cancelAllOf(pageId, 'the page crashed'));
      contents.on('destroyed', () => calls.cancelAllOf(pageId, 'the window was closed'));
      await win.loadURL(`${APP_ORIGIN}/index.html`);
    })
    .catch((err: unknown) => {
      const message = err instanceof Error ? err.message : String(err);
      logger.error('GPU Console could not start', { error: message });
      dialog.showErrorBox('GPU Console could not start', message);
      app.exit(1);
    });

  let quitting = false;
  app.on('before-quit', (event) => {
    if (quitting || !core) return;
    event.preventDefault();
    quitting = true;
    const { app: started, api, demo } = core;
    void Promise.resolve(api.dispose())
      .then(() => started.dispose())
      .then(() => demo?.dispose())
      .finally(() => app.quit());
  });
  app.on('window-all-closed', () => app.quit());
}
