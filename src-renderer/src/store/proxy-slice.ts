// The proxy's live figures (one `proxy.stats` event a second replaces them).
import type { StateCreator } from 'zustand/vanilla';
import type { ProxyStats } from '../../../src-preload/contract/index.js';
import { replaceEqualDeep } from './share.js';

export interface ProxySlice {
  proxy: { stats: ProxyStats | null };
  applyProxyStats(stats: ProxyStats): void;
}

export function reduceProxyStats(current: ProxyStats | null, next: ProxyStats): ProxyStats | null {
  if (current !== null && next.at < current.at) return current;
  return current === null ? next : replaceEqualDeep(current, next);
}

export const createProxySlice: StateCreator<ProxySlice, [], [], ProxySlice> = (set) => ({
  proxy: { stats: null },
  applyProxyStats: (stats) =>
    set((state) => {
      const next = reduceProxyStats(state.proxy.stats, stats);
      return next === state.proxy.stats ? state : { proxy: { stats: next } };
    }),
});
