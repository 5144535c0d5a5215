// Chooses the mechanism once at start: the preload's bridge inside Electron,
// otherwise the web bridge with the token from the URL (or this tab's storage).
import { IpcTransport, type GpuConsoleBridge } from './ipc-transport.js';
import { resolveToken } from './token.js';
import type { Transport } from './transport.js';
import { WebTransport } from './web-transport.js';

export type PickedTransport = { kind: 'ready'; transport: Transport } | { kind: 'no-token' };

declare global {
  interface Window {
    gpuConsole?: GpuConsoleBridge;
  }
}

export function pickTransport(win: Window = window): PickedTransport {
  const bridge = win.gpuConsole;
  if (bridge && typeof bridge.invoke === 'function' && typeof bridge.on === 'function') {
    return { kind: 'ready', transport: new IpcTransport(bridge) };
  }
  let storage: Storage | null = null;
  try {
    storage = win.sessionStorage;
  } catch {
    storage = null;
  }
  const token = resolveToken({
    hash: win.location.hash,
    storage,
    replaceHash: (nextHash) => {
      win.history.replaceState(win.history.state, '', `${win.location.pathname}${win.location.search}${nextHash}`);
    },
  });
  if (token === null) return { kind: 'no-token' };
  const transport = new WebTransport({
    token,
    fetch: win.fetch.bind(win),
    now: () => Date.now(),
    setTimeout: (fn, ms) => win.setTimeout(fn, ms),
    clearTimeout: (handle) => win.clearTimeout(handle as number),
  });
  transport.start();
  return { kind: 'ready', transport };
}
