// What the console says about itself (app.info) and how the link to it is doing.
import type { StateCreator } from 'zustand/vanilla';
import type { AppInfo, ContractError, EventPayload } from '../../../src-preload/contract/index.js';
import type { ConnectionState, TransportKind } from '../transport/transport.js';

export interface AppSlice {
  app: {
    transportKind: TransportKind;
    info: AppInfo | null;
    /** Why app.info could not be read (shown instead of the header details). */
    infoError: ContractError | null;
    connection: ConnectionState;
  };
  setInfo(info: AppInfo): void;
  setInfoError(error: ContractError): void;
  setConnection(connection: ConnectionState): void;
  applyConfigChanged(event: EventPayload<'config.changed'>): void;
}

export function reduceConfigChanged(info: AppInfo | null, event: EventPayload<'config.changed'>): AppInfo | null {
  if (info === null) return info;
  return { ...info, configError: event.ok ? null : event.error };
}

export function createAppSlice(
  transportKind: TransportKind,
  connection: ConnectionState,
): StateCreator<AppSlice, [], [], AppSlice> {
  return (set) => ({
    app: { transportKind, info: null, infoError: null, connection },
    setInfo: (info) => set((state) => ({ app: { ...state.app, info, infoError: null } })),
    setInfoError: (error) => set((state) => ({ app: { ...state.app, infoError: error } })),
    setConnection: (next) => set((state) => ({ app: { ...state.app, connection: next } })),
    applyConfigChanged: (event) => set((state) => ({ app: { ...state.app, info: reduceConfigChanged(state.app.info, event) } })),
  });
}
