// The Electron main process: single instance, locked-down window, app://
// protocol, ipcMain bound to the contract through core/api with sender checks.
// All behaviour lives in core; this file only adapts Electron to it.
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { BrowserWindow, app, dialog, ipcMain, type IpcMainInvokeEvent, type WebContents } from 'electron';
import { BridgeErrorCode, IPC_EVENT, IPC_INVOKE } from '../../src-preload/contract/index.js';
import { createApi, type Api } from '../core/api.js';
import { startApp, type App } from '../core/app.js';
import { createLogger } from '../core/base/index.js';
import { defaultDataDir } from '../core/instance/index.js';
import { VERSION } from '../core/instance/index.js';
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

const logger = createLogger({ level: 'info', scope: 'shell' });

function isTrustedSender(event: IpcMainInvokeEvent, trusted: WebContents | null): boolean {
  const frame = event.senderFrame;
  return trusted !== null && event.sender === trusted && frame !== null && frame.url.startsWith(`${APP_ORIGIN}/`);
}

export function runDesktop(): void {
  if (!app.requestSingleInstanceLock()) {
    app.quit();
    return;
  }
  const dataDir = defaultDataDir(process.env, process.platform, homedir());
  app.setPath('userData', dataDir);
  registerAppScheme();

  let core: { app: App; api: Api } | null = null;
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
      const started = await startApp({
        mode: 'electron',
        version: VERSION,
        dataDir,
        configFile: process.env.GPU_CONSOLE_CONFIG ?? null,
        demo: process.argv.includes('--demo'),
        demoOptions: { traffic: !process.argv.includes('--demo-traffic=off') },
        logger,
        sqliteNativeBinding: nativeBinding,
        secretStore: keychainSecretStore,
        pdfPrinter: new ElectronPdfPrinter(),
        filePicker: nativeFilePicker,
        notifier: electronNotifier((route) => core?.app.openRoute(route)),
      });
      const api = createApi(started, logger.child('api'));
      core = { app: started, api };
      ipcMain.handle(IPC_INVOKE, (event, channel: unknown, input: unknown) => {
        if (!isTrustedSender(event, contents)) {
          return { ok: false, error: { code: BridgeErrorCode.FORBIDDEN_SENDER, message: 'IPC from an untrusted frame', retryable: false, details: {} } };
        }
        return api.invoke(String(channel), input, { caller: 'ipc' });
      });
      api.onEvent((e) => {
        if (contents && !contents.isDestroyed()) contents.send(IPC_EVENT, e.channel, e.payload);
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
    const { app: started, api } = core;
    void Promise.resolve(api.dispose())
      .then(() => started.dispose())
      .finally(() => app.quit());
  });
  app.on('window-all-closed', () => app.quit());
}
