// The Actions view's data: one actions.list on mount, then action.changed /
// action.standing events merged in (parsed by the transport's schema check).
import { useCallback, useEffect, useState } from 'react';
import type { ActionView, LifecycleTarget, StandingApprovalView } from '../../../../src-preload/contract/index.js';
import { ActionViewSchema, StandingApprovalViewSchema } from '../../../../src-preload/contract/index.js';
import { useServices } from '../../app/app-context.js';
import { toContractError } from '../../transport/transport.js';

export interface ActionsData {
  actions: ActionView[];
  standing: StandingApprovalView[];
  targets: LifecycleTarget[];
  error: string | null;
  reload(): void;
}

export function useActions(): ActionsData {
  const { transport } = useServices();
  const [actions, setActions] = useState<ActionView[]>([]);
  const [standing, setStanding] = useState<StandingApprovalView[]>([]);
  const [targets, setTargets] = useState<LifecycleTarget[]>([]);
  const [error, setError] = useState<string | null>(null);
  const reload = useCallback(() => {
    transport.invoke('actions.list', { limit: 100 }).then(
      (r) => {
        setActions(r.actions);
        setStanding(r.standing);
        setTargets(r.targets);
        setError(null);
      },
      (err: unknown) => setError(toContractError(err).message),
    );
  }, [transport]);
  useEffect(() => {
    reload();
    const offAction = transport.on('action.changed', (payload) => {
      const parsed = ActionViewSchema.safeParse(payload);
      if (!parsed.success) return;
      const a = parsed.data;
      setActions((list) => {
        const i = list.findIndex((x) => x.id === a.id);
        if (i === -1) return [a, ...list];
        const next = list.slice();
        next[i] = a;
        return next;
      });
    });
    const offStanding = transport.on('action.standing', (payload) => {
      const parsed = StandingApprovalViewSchema.safeParse(payload);
      if (!parsed.success) return;
      const s = parsed.data;
      setStanding((list) => [s, ...list.filter((x) => x.id !== s.id)]);
    });
    return () => {
      offAction();
      offStanding();
    };
  }, [transport, reload]);
  return { actions, standing, targets, error, reload };
}

export const seconds = (ms: number): string => `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
