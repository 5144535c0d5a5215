// The tray icon: how many approvals wait and how many alerts are active, so the
// operator sees it with the window hidden. Clicking shows the window.
import { BrowserWindow, Menu, Tray, nativeImage } from 'electron';
import type { Disposable } from '../core/base/index.js';
import { attentionLabel, type AttentionCounts } from '../core/notify/index.js';

export function createTray(iconPath: string, counts: () => AttentionCounts, onChange: (listener: () => void) => Disposable): Disposable {
  const image = nativeImage.createFromPath(iconPath).resize({ width: 18, height: 18 });
  const tray = new Tray(image);
  const showWindow = () => {
    const win = BrowserWindow.getAllWindows()[0];
    if (!win) return;
    if (win.isMinimized()) win.restore();
    win.show();
    win.focus();
  };
  const refresh = () => {
    const c = counts();
    const label = attentionLabel(c);
    tray.setToolTip(label);
    // macOS shows a title beside the icon; elsewhere the tooltip and menu carry it.
    tray.setTitle(c.pendingApprovals + c.activeAlerts > 0 ? String(c.pendingApprovals + c.activeAlerts) : '');
    tray.setContextMenu(
      Menu.buildFromTemplate([
        { label, enabled: false },
        { type: 'separator' },
        { label: 'Show GPU Console', click: showWindow },
        { role: 'quit', label: 'Quit GPU Console' },
      ]),
    );
  };
  tray.on('click', showWindow);
  refresh();
  const subscription = onChange(refresh);
  return {
    dispose: () => {
      void subscription.dispose();
      tray.destroy();
    },
  };
}
