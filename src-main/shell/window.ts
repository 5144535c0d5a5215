import { join } from 'node:path';
import { BrowserWindow, session, shell as electronShell } from 'electron';
import { APP_ORIGIN } from './protocol.js';

// One window, locked down: sandboxed renderer with context isolation, no Node,
// no navigation away from app://renderer, no new windows, no permissions.
export function createMainWindow(preloadDir: string): BrowserWindow {
  const win = new BrowserWindow({
    width: 1440,
    height: 900,
    minWidth: 1024,
    minHeight: 640,
    title: 'GPU Console',
    backgroundColor: '#0f1115',
    show: false,
    webPreferences: {
      preload: join(preloadDir, 'index.cjs'),
      sandbox: true,
      contextIsolation: true,
      nodeIntegration: false,
      nodeIntegrationInWorker: false,
      nodeIntegrationInSubFrames: false,
      webSecurity: true,
      allowRunningInsecureContent: false,
      experimentalFeatures: false,
      webviewTag: false,
      spellcheck: false,
    },
  });
  win.once('ready-to-show', () => win.show());
  win.webContents.on('will-navigate', (event, url) => {
    if (!url.startsWith(`${APP_ORIGIN}/`)) event.preventDefault();
  });
  win.webContents.on('will-redirect', (event, url) => {
    if (!url.startsWith(`${APP_ORIGIN}/`)) event.preventDefault();
  });
  win.webContents.setWindowOpenHandler(({ url }) => {
    // Links to documentation may open in the system browser; nothing opens in-app.
    if (url.startsWith('https://')) void electronShell.openExternal(url);
    return { action: 'deny' };
  });
  return win;
}

export function lockDownSessions(): void {
  const ses = session.defaultSession;
  ses.setPermissionRequestHandler((_wc, _permission, callback) => callback(false));
  ses.setPermissionCheckHandler(() => false);
  ses.on('will-download', (event) => event.preventDefault());
}
