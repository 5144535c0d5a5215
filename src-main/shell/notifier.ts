// Native notifications for the desktop app; a click brings the window forward.
import { BrowserWindow, Notification } from 'electron';
import type { Notifier } from '../core/ports.js';

export function electronNotifier(): Notifier {
  return {
    notify(request) {
      if (!Notification.isSupported()) return;
      const n = new Notification({ title: request.title, body: request.body, silent: false });
      n.on('click', () => {
        const win = BrowserWindow.getAllWindows()[0];
        if (!win) return;
        if (win.isMinimized()) win.restore();
        win.show();
        win.focus();
      });
      n.show();
    },
  };
}
