// Native notifications for the desktop app; a click brings the window forward.
import { BrowserWindow, Notification } from 'electron';
import type { Notifier } from '../core/ports.js';

export function electronNotifier(onOpen: (route: string) => void): Notifier {
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
        if (request.route) onOpen(request.route);
      });
      n.show();
    },
  };
}
