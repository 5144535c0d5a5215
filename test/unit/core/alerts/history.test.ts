import { describe, expect, it } from 'vitest';
import { alertHistoryFrom, changeSummary, handoverChangesFrom } from '../../../../src-main/core/alerts/index.js';
import type { Alert } from '../../../../src-preload/contract/alerts.js';

let seq = 0;
const row = (ts: number, type: string, target: string | null, payload: Record<string, unknown>, actor = 'system') => ({ seq: ++seq, ts, type, actor, target, payload });
const H = 3_600_000;

describe('alert history from audit rows', () => {
  it('pairs raise and clear by alert id, keeps the worst severity and what it said then, who acknowledged and the silence', () => {
    const rows = [
      row(1 * H, 'alert.raised', 'gpu-a/qwen', { alertId: 'throughput:gpu-a/qwen', kind: 'throughput', severity: 'warning', message: 'slow', raisedAt: 1 * H }),
      row(1.5 * H, 'alert.changed', 'gpu-a/qwen', { alertId: 'throughput:gpu-a/qwen', kind: 'throughput', severity: 'critical', message: 'slower' }),
      row(1.6 * H, 'alert.acknowledged', 'gpu-a/qwen', { alertId: 'throughput:gpu-a/qwen', kind: 'throughput' }, 'operator:ann@web'),
      row(2 * H, 'alert.changed', 'gpu-a/qwen', { alertId: 'throughput:gpu-a/qwen', kind: 'throughput', severity: 'warning', message: 'slow', silencedBy: 'sil-1' }),
      row(3 * H, 'alert.cleared', 'gpu-a/qwen', { alertId: 'throughput:gpu-a/qwen', kind: 'throughput', severity: 'warning', message: 'slow', raisedAt: 1 * H }),
      // Raised and cleared long before the window: left out.
      row(0.1 * H, 'alert.raised', 'gpu-b', { alertId: 'disk_low:gpu-b#/', kind: 'disk_low', severity: 'warning', message: 'disk' }),
      row(0.2 * H, 'alert.cleared', 'gpu-b', { alertId: 'disk_low:gpu-b#/', kind: 'disk_low', severity: 'warning', message: 'disk' }),
    ];
    const { alerts, truncated } = alertHistoryFrom(rows, [], 0.5 * H, 4 * H, 100);
    expect(truncated).toBe(false);
    expect(alerts).toEqual([
      {
        id: 'throughput:gpu-a/qwen',
        kind: 'throughput',
        severity: 'critical',
        host: 'gpu-a',
        serviceId: 'qwen',
        message: 'slower',
        raisedAt: 1 * H,
        clearedAt: 3 * H,
        durationMs: 2 * H,
        ackBy: 'operator:ann@web',
        ackAt: 1.6 * H,
        silencedBy: 'sil-1',
        incident: null,
      },
    ]);
  });

  it('an alert still open comes from the engine (its raise may be older than the rows read); a clear whose raise was not read keeps the raise time it carries', () => {
    const open: Alert = { id: 'gpu_hot:gpu-a#0', kind: 'gpu_hot', severity: 'critical', host: 'gpu-a', serviceId: null, model: null, message: 'hot', value: 91, threshold: 85, raisedAt: 10, updatedAt: 10, ack: { by: 'operator:bo@cli', at: 20, note: null }, silencedBy: null };
    const rows = [row(2 * H, 'alert.cleared', 'gpu-b', { alertId: 'host_stale:gpu-b', kind: 'host_stale', severity: 'warning', message: 'stale', raisedAt: 1.9 * H })];
    const { alerts } = alertHistoryFrom(rows, [open], 1 * H, 3 * H, 100);
    expect(alerts.map((a) => [a.id, a.raisedAt, a.clearedAt, a.ackBy])).toEqual([
      ['host_stale:gpu-b', 1.9 * H, 2 * H, null],
      ['gpu_hot:gpu-a#0', 10, null, 'operator:bo@cli'],
    ]);
  });

  it('a silence set while the alert was open names it, even when it ended before the alert\'s next row', () => {
    const rows = [
      row(1 * H, 'alert.raised', 'gpu-a', { alertId: 'gpu_hot:gpu-a#0', kind: 'gpu_hot', severity: 'warning', message: 'hot' }),
      row(1.2 * H, 'alerts.silence.set', 'gpu-a', { silenceId: 'sil-9', rule: 'gpu_hot', host: 'gpu-a', covers: ['gpu_hot:gpu-a#0', 'other'] }, 'operator:ann@web'),
      row(2 * H, 'alert.cleared', 'gpu-a', { alertId: 'gpu_hot:gpu-a#0', kind: 'gpu_hot', severity: 'warning', message: 'hot' }),
    ];
    expect(alertHistoryFrom(rows, [], 0, 3 * H, 10).alerts[0]!.silencedBy).toBe('sil-9');
  });

  it('limit keeps the newest and says it cut', () => {
    const rows = Array.from({ length: 5 }, (_, i) => row(H + i, 'alert.raised', 'h', { alertId: `host_stale:h${i}`, kind: 'host_stale', severity: 'warning', message: 'm' }));
    const { alerts, truncated } = alertHistoryFrom(rows, [], 0, 2 * H, 2);
    expect(truncated).toBe(true);
    expect(alerts.map((a) => a.id)).toEqual(['host_stale:h4', 'host_stale:h3']);
  });
});

describe('handover changes', () => {
  it('one line per change from known fields; lifecycle steps left out; secrets in free text masked', () => {
    const rows = [
      row(1, 'lifecycle.proposed', 'gpu-a/qwen', { actionId: 'a1', kind: 'restart', state: 'proposed', reason: 'stuck, token=sk-secret-123' }, 'policy:stuck'),
      row(2, 'lifecycle.step', 'gpu-a/qwen', { actionId: 'a1', text: 'systemctl restart' }),
      row(3, 'lifecycle.verified', 'gpu-a/qwen', { actionId: 'a1', kind: 'restart', state: 'verified' }, 'operator:ann@web'),
      row(4, 'proxy.caps.changed', 'gpu-a/qwen', { slots: 8, before: { batch: { slots: 4 } }, after: { batch: { slots: 6 } } }, 'operator:ann@web'),
      row(5, 'alerts.silence.set', 'gpu-a', { silenceId: 'sil-1', rule: 'throughput', host: 'gpu-a', serviceId: null, model: null, forMs: 2 * H, reason: 'maintenance' }, 'operator:ann@web'),
      row(6, 'alerts.silence.expired', 'gpu-a', { silenceId: 'sil-1' }),
      row(7, 'alert.raised', 'gpu-a', { kind: 'host_stale' }),
    ];
    const changes = handoverChangesFrom(rows, 0, 10);
    expect(changes.map((c) => [c.type, c.actor, c.summary])).toEqual([
      ['lifecycle.proposed', 'policy:stuck', 'restart proposed — stuck, token=[redacted]'],
      ['lifecycle.verified', 'operator:ann@web', 'restart verified'],
      ['proxy.caps.changed', 'operator:ann@web', 'caps changed: batch 4 → batch 6'],
      ['alerts.silence.set', 'operator:ann@web', 'silenced throughput on gpu-a for 2 h — maintenance'],
      ['alerts.silence.expired', 'system', 'silence sil-1 ran out'],
    ]);
    expect(changeSummary(row(1, 'lifecycle.failed', 'x', { kind: 'wake', error: 'HTTP 500' }))).toBe('wake failed (HTTP 500)');
  });
});
