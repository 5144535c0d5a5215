// The lifecycle actions, standing approvals and the services they can target:
// one `actions.list` answer, then `action.changed` / `action.standing` merged in.
import type { StateCreator } from 'zustand/vanilla';
import type { ActionView, ChannelOutput, LifecycleTarget, StandingApprovalView } from '../../../src-preload/contract/index.js';

export type ActionsList = ChannelOutput<'actions.list'>;

export interface ActionsSlice {
  actions: {
    /** Newest first, as `actions.list` orders them; a new action goes in front. */
    list: ActionView[];
    standing: StandingApprovalView[];
    targets: LifecycleTarget[];
  };
  setActionsList(list: ActionsList): void;
  applyActionChanged(action: ActionView): void;
  applyStandingChanged(standing: StandingApprovalView): void;
}

/** The changed action replaces its old version in place; an unknown one goes first. */
export function reduceActionChanged(list: ActionView[], action: ActionView): ActionView[] {
  const i = list.findIndex((x) => x.id === action.id);
  if (i === -1) return [action, ...list];
  const next = list.slice();
  next[i] = action;
  return next;
}

/** A standing approval that changed moves to the front. */
export function reduceStandingChanged(list: StandingApprovalView[], standing: StandingApprovalView): StandingApprovalView[] {
  return [standing, ...list.filter((x) => x.id !== standing.id)];
}

export const createActionsSlice: StateCreator<ActionsSlice, [], [], ActionsSlice> = (set) => ({
  actions: { list: [], standing: [], targets: [] },
  setActionsList: (out) => set({ actions: { list: out.actions, standing: out.standing, targets: out.targets } }),
  applyActionChanged: (action) => set((state) => ({ actions: { ...state.actions, list: reduceActionChanged(state.actions.list, action) } })),
  applyStandingChanged: (standing) =>
    set((state) => ({ actions: { ...state.actions, standing: reduceStandingChanged(state.actions.standing, standing) } })),
});
