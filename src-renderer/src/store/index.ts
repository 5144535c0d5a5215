// The renderer's single zustand store (slices: app, fleet, ui) and its wiring to a transport.
export { createAppStore, type AppStore } from './store.js';
export type { RootState } from './types.js';
export { wireTransport } from './wire.js';
export * from './fleet-slice.js';
export * from './app-slice.js';
export * from './ui-slice.js';
export * from './proxy-slice.js';
