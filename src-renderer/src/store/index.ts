// The renderer's single zustand store (one slice per kind of server state, plus
// the UI's own) and its wiring to a transport.
export { createAppStore, type AppStore } from './store.js';
export type { RootState } from './types.js';
export { wireTransport } from './wire.js';
export * from './fleet-slice.js';
export * from './app-slice.js';
export * from './ui-slice.js';
export * from './proxy-slice.js';
export * from './actions-slice.js';
export * from './bench-slice.js';
export * from './reports-slice.js';
export * from './notifications-slice.js';
