import type { HostConnectionState } from '../../../../src-preload/contract/index.js';
import type { BadgeTone } from '../../components/badge-tone.js';

export const HOST_STATE_TONE: Record<HostConnectionState, BadgeTone> = {
  connected: 'ok',
  connecting: 'warn',
  reconnecting: 'warn',
  'awaiting-trust': 'info',
  failed: 'error',
  disconnected: 'neutral',
};

/** Whether the primary action for this state is Connect (else Disconnect). */
export function offersConnect(state: HostConnectionState): boolean {
  return state === 'disconnected' || state === 'failed';
}
