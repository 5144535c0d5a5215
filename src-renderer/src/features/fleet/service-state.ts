import type { ServiceView, SleepState, TunnelState } from '../../../../src-preload/contract/index.js';
import type { BadgeTone } from '../../components/badge-tone.js';

export const TUNNEL_TONE: Record<TunnelState, BadgeTone> = {
  up: 'ok',
  connecting: 'warn',
  reconnecting: 'warn',
  degraded: 'warn',
  failed: 'error',
  idle: 'neutral',
  closed: 'neutral',
};

export function sleepBadge(sleep: SleepState): { tone: BadgeTone; text: string } {
  switch (sleep) {
    case 'awake':
      return { tone: 'ok', text: 'awake' };
    case 'asleep-1':
      return { tone: 'info', text: 'asleep · L1' };
    case 'asleep-2':
      return { tone: 'info', text: 'asleep · L2' };
    default:
      return { tone: 'neutral', text: 'sleep ?' };
  }
}

export const HEALTH_TONE: Record<ServiceView['health'], BadgeTone> = { ok: 'ok', loading: 'warn', down: 'error', unknown: 'neutral' };

/** The health badge's words (its colour is never the only signal). */
export const HEALTH_TEXT: Record<ServiceView['health'], string> = { ok: 'healthy', loading: 'loading model', down: 'down', unknown: 'health ?' };
