// Turns host connection changes into notifications an operator needs at
// 3 a.m.: a host lost (warning), back (info), failed or refused (critical),
// waiting for a trust decision (warning). Flapping is folded by the router.
import type { HostConnectionState } from '../../../src-preload/contract/index.js';
import type { NotificationInput } from './router.js';

export function hostTransitionNotification(
  label: string,
  from: HostConnectionState | null,
  to: HostConnectionState,
  message: string | null,
): NotificationInput | null {
  const route = `fleet/${label}`;
  const key = `host:${label}`;
  const detail = message ? ` ${message}` : '';
  if (to === 'reconnecting' && from === 'connected') {
    return { key, severity: 'warning', title: `${label}: connection lost`, body: `Reconnecting…${detail}`, route, event: 'host.down' };
  }
  if (to === 'connected' && (from === 'reconnecting' || from === 'failed')) {
    return { key, severity: 'info', title: `${label}: connection back`, body: 'SSH session and tunnels restored.', route, event: 'host.back' };
  }
  if (to === 'failed') {
    return { key, severity: 'critical', title: `${label}: connection failed`, body: message ?? 'The host cannot be reached.', route, event: 'host.down' };
  }
  if (to === 'awaiting-trust') {
    return { key, severity: 'warning', title: `${label}: host key needs your decision`, body: message ?? 'Confirm or refuse its fingerprint.', route };
  }
  return null;
}
