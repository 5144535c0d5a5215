import { BrowserWindow, dialog } from 'electron';
import type { FilePicker } from '../core/ports.js';

// The native "open file" dialog, parented to the console's window. What the
// operator chooses goes to core as a path; the renderer never names one.
export const nativeFilePicker: FilePicker = {
  async chooseFile({ title, defaultPath, signal }) {
    const parent = BrowserWindow.getFocusedWindow() ?? BrowserWindow.getAllWindows()[0];
    const options = { title, defaultPath, properties: ['openFile', 'showHiddenFiles'] as Array<'openFile' | 'showHiddenFiles'> };
    const result = parent ? await dialog.showOpenDialog(parent, options) : await dialog.showOpenDialog(options);
    if (signal?.aborted || result.canceled) return null;
    return result.filePaths[0] ?? null;
  },
};
