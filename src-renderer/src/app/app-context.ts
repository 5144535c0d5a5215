import { createContext, useContext } from 'react';
import { useStore } from 'zustand';
import type { TokHistory } from '../features/fleet/tok-history.js';
import type { AppStore } from '../store/store.js';
import type { RootState } from '../store/types.js';
import type { Transport } from '../transport/transport.js';

export interface AppServices {
  readonly store: AppStore;
  readonly transport: Transport;
  readonly tokHistory: TokHistory;
}

export const AppContext = createContext<AppServices | null>(null);

export function useServices(): AppServices {
  const services = useContext(AppContext);
  if (services === null) throw new Error('AppContext missing: render inside <AppContext.Provider>');
  return services;
}

/** Narrow store read; pass a `useShallow` selector for derived objects. */
export function useAppStore<T>(selector: (state: RootState) => T): T {
  return useStore(useServices().store, selector);
}
