import { createContext, useContext, useEffect, useEffectEvent } from 'react';
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

/**
 * Calls `onChange(next, prev)` each time the selected part of the store changes
 * while the component is mounted, synchronously with the store write: for what
 * an event sets off (a desktop notification, reloading a list), not for
 * rendering. The value found at mount is not a change. Pass a stable selector
 * (a module-level function), or the subscription is renewed on every render.
 */
export function useStoreChange<T>(select: (state: RootState) => T, onChange: (next: T, prev: T) => void): void {
  const { store } = useServices();
  const changed = useEffectEvent(onChange);
  useEffect(
    () =>
      store.subscribe((state, prev) => {
        const next = select(state);
        const before = select(prev);
        if (!Object.is(next, before)) changed(next, before);
      }),
    [store, select],
  );
}
