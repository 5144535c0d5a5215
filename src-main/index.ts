// Electron main entry (out/main/index.js). Everything Electron-specific is in shell/.
import { runDesktop } from './shell/main.js';

runDesktop();
