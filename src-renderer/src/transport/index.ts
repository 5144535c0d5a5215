// The renderer's link to the core: a contract-typed Transport over Electron IPC
// or the web bridge (fetch + SSE), chosen once at start.
export * from './transport.js';
export { pickTransport, type PickedTransport } from './pick-transport.js';
export { WebTransport, type WebTransportDeps } from './web-transport.js';
export { IpcTransport, type GpuConsoleBridge } from './ipc-transport.js';
