// One store from its slices. Vanilla (no React) so it is testable in Node and
// so charts can `subscribe` to ticks without a React render per sample.
import { createStore, type StoreApi } from 'zustand/vanilla';
import { OPEN_CONNECTION, type ConnectionState, type TransportKind } from '../transport/transport.js';
import { createActionsSlice } from './actions-slice.js';
import { createAppSlice } from './app-slice.js';
import { createBenchSlice } from './bench-slice.js';
import { createFleetSlice } from './fleet-slice.js';
import { createNotificationsSlice } from './notifications-slice.js';
import { createProxySlice } from './proxy-slice.js';
import { createReportsSlice } from './reports-slice.js';
import type { RootState } from './types.js';
import { createUiSlice, type Theme } from './ui-slice.js';

export type AppStore = StoreApi<RootState>;

export interface StoreOptions {
  transportKind: TransportKind;
  connection?: ConnectionState;
  theme?: Theme;
}

export function createAppStore(options: StoreOptions): AppStore {
  return createStore<RootState>()((...a) => ({
    ...createAppSlice(options.transportKind, options.connection ?? OPEN_CONNECTION)(...a),
    ...createFleetSlice(...a),
    ...createProxySlice(...a),
    ...createUiSlice(options.theme ?? 'dark')(...a),
    ...createActionsSlice(...a),
    ...createBenchSlice(...a),
    ...createReportsSlice(...a),
    ...createNotificationsSlice(...a),
  }));
}
