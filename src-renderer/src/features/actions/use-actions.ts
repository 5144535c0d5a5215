// The Actions view's data, from the store's actions slice (fed by
// action.changed / action.standing, parsed by the transport): one actions.list
// on mount replaces it, as the view always did.
import { useCallback, useEffect, useState } from 'react';
import type { ActionView, LifecycleTarget, StandingApprovalView } from '../../../../src-preload/contract/index.js';
import { useAppStore, useServices } from '../../app/app-context.js';
import { toContractError } from '../../transport/transport.js';

export interface ActionsData {
  actions: ActionView[];
  standing: StandingApprovalView[];
  targets: LifecycleTarget[];
  error: string | null;
  reload(): void;
}

export function useActions(): ActionsData {
  const { transport, store } = useServices();
  const { list: actions, standing, targets } = useAppStore((s) => s.actions);
  const [error, setError] = useState<string | null>(null);
  const reload = useCallback(() => {
    transport.invoke('actions.list', { limit: 100 }).then(
      (r) => {
        store.getState().setActionsList(r);
        setError(null);
      },
      (err: unknown) => setError(toContractError(err).message),
    );
  }, [transport, store]);
  useEffect(() => reload(), [reload]);
  return { actions, standing, targets, error, reload };
}

export const seconds = (ms: number): string => `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
