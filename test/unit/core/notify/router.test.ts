import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../../src-main/core/base/index.js';
import { NotificationRouter, hostTransitionNotification, type ConsoleNotification } from '../../../../src-main/core/notify/index.js';

function setup(opts: { perKeyIntervalMs?: number; maxPerMinute?: number } = {}) {
  const clock = new FakeClock();
  const shown: ConsoleNotification[] = [];
  const router = new NotificationRouter({ clock, deliver: (n) => shown.push(n), ...opts });
  return { clock, shown, router };
}

const n = (key: string, severity: 'info' | 'warning' | 'critical' = 'warning') => ({ key, severity, title: key, body: '', route: 'fleet' });

describe('NotificationRouter', () => {
  it('folds repeats of one subject within the interval, then lets the next through', () => {
    const { clock, shown, router } = setup({ perKeyIntervalMs: 60_000 });
    expect(router.push(n('tunnel:a')).outcome).toBe('sent');
    clock.advance(10_000);
    expect(router.push(n('tunnel:a')).outcome).toBe('folded');
    expect(router.push(n('tunnel:b')).outcome).toBe('sent');
    clock.advance(50_001);
    expect(router.push(n('tunnel:a')).outcome).toBe('sent');
    expect(shown.map((s) => s.key)).toEqual(['tunnel:a', 'tunnel:b', 'tunnel:a']);
  });

  it('caps native notifications per minute overall', () => {
    const { clock, shown, router } = setup({ maxPerMinute: 3 });
    const outcomes = Array.from({ length: 5 }, (_, i) => router.push(n(`k${i}`)).outcome);
    expect(outcomes).toEqual(['sent', 'sent', 'sent', 'rate-limited', 'rate-limited']);
    clock.advance(60_000);
    expect(router.push(n('k9')).outcome).toBe('sent');
    expect(shown).toHaveLength(4);
  });

  it('critical events skip folding but not do-not-disturb; every event stays in the in-app list', () => {
    const { clock, shown, router } = setup();
    router.push(n('host:a', 'critical'));
    expect(router.push(n('host:a', 'critical')).outcome).toBe('sent');
    router.setDoNotDisturb(true, clock.now() + 30 * 60_000);
    expect(router.push(n('host:b', 'critical')).outcome).toBe('suppressed-dnd');
    clock.advance(30 * 60_000);
    expect(router.doNotDisturb).toBe(false);
    expect(router.push(n('host:c')).outcome).toBe('sent');
    expect(shown.map((s) => s.key)).toEqual(['host:a', 'host:a', 'host:c']);
    expect(router.recent().map((s) => s.key)).toEqual(['host:c', 'host:b', 'host:a', 'host:a']);
  });
});

describe('hostTransitionNotification', () => {
  it('says what changed for the transitions an operator must know about', () => {
    expect(hostTransitionNotification('l20-poc', 'connected', 'reconnecting', 'SSH_DISCONNECTED')).toMatchObject({ severity: 'warning', route: 'fleet/l20-poc' });
    expect(hostTransitionNotification('l20-poc', 'reconnecting', 'connected', null)).toMatchObject({ severity: 'info', title: 'l20-poc: connection back' });
    expect(hostTransitionNotification('l20-poc', 'connecting', 'failed', 'SSH_HOST_KEY_CHANGED')).toMatchObject({ severity: 'critical' });
    expect(hostTransitionNotification('l20-poc', 'connecting', 'awaiting-trust', null)?.title).toContain('host key');
  });

  it('stays quiet for routine transitions', () => {
    expect(hostTransitionNotification('a', 'disconnected', 'connecting', null)).toBeNull();
    expect(hostTransitionNotification('a', 'connecting', 'connected', null)).toBeNull();
  });
});

describe('attentionLabel', () => {
  it('names approvals and alerts with their counts, and says when nothing needs the operator', async () => {
    const { attentionLabel } = await import('../../../../src-main/core/notify/index.js');
    expect(attentionLabel({ pendingApprovals: 0, activeAlerts: 0 })).toBe('GPU Console — nothing needs you');
    expect(attentionLabel({ pendingApprovals: 1, activeAlerts: 2 })).toBe('GPU Console — 1 approval waiting, 2 active alerts');
    expect(attentionLabel({ pendingApprovals: 3, activeAlerts: 0 })).toBe('GPU Console — 3 approvals waiting');
  });
});
