import { describe, expect, it } from 'vitest';
import { AlertSchema, type Alert, type AlertHistory, type Silence } from '../../../../src-preload/contract/index.js';
import { historyMarkdown, openFor } from '../../../../src-renderer/src/features/alerts/handover.js';
import { silenceRequest } from '../../../../src-renderer/src/features/alerts/silence-form.js';
import { incidentText, silenceOf, silenceScopeText, sparklinePaths } from '../../../../src-renderer/src/features/host/alert-list-state.js';

// The alert book in the UI (issue #30 items 4 and 5): the silence dialog's
// input, an alert row's figure, series, incident, acknowledgement and silence,
// and the handover export.

const alert = (p: Partial<Alert>): Alert =>
  AlertSchema.parse({ id: 'throughput:gpu-a/qwen', kind: 'throughput', severity: 'warning', host: 'gpu-a', serviceId: 'qwen', model: 'Qwen3-8B', message: 'slower', value: 30, threshold: 42, raisedAt: 1, updatedAt: 1, ...p });
const silence: Silence = { id: 'sil-1', rule: 'throughput', host: 'gpu-a', serviceId: null, model: null, reason: 'maintenance | window', by: 'operator:ann@web', createdAt: 0, until: 7_200_000, endedAt: null, endedBy: null };

// The node typecheck has no JSX: the component is loaded by a specifier it does not resolve (as alert-list.test.ts does).
const COMPONENT = '../../../../src-renderer/src/features/host/AlertList.js';
type Props = { alerts: readonly Alert[]; silences?: readonly Silence[]; showHost?: boolean };
const { AlertList } = (await import(COMPONENT)) as { AlertList: (p: Props) => unknown };
// React's types stay out of the node typecheck too (they declare empty DOM interfaces the e2e tests would see).
const REACT = 'react';
const REACT_DOM_SERVER = 'react-dom/server';
const { createElement } = (await import(REACT)) as { createElement(c: (p: Props) => unknown, p: Props): unknown };
const { renderToStaticMarkup } = (await import(REACT_DOM_SERVER)) as { renderToStaticMarkup(el: unknown): string };

describe('silence dialog input', () => {
  const base = { alert: alert({}), rule: 'throughput', scope: 'service' as const, duration: '2h', customMinutes: '90', reason: 'kernel update' };
  it('preset durations and scopes become the contract input', () => {
    expect(silenceRequest(base)).toEqual({ ok: true, input: { rule: 'throughput', host: 'gpu-a', serviceId: 'qwen', forMs: 7_200_000, reason: 'kernel update' } });
    expect(silenceRequest({ ...base, scope: 'model', duration: 'custom', customMinutes: '45' })).toEqual({ ok: true, input: { rule: 'throughput', model: 'Qwen3-8B', forMs: 2_700_000, reason: 'kernel update' } });
    expect(silenceRequest({ ...base, scope: 'host', rule: 'all' })).toMatchObject({ ok: true, input: { rule: 'all', host: 'gpu-a' } });
  });
  it('refuses what the contract refuses: no reason, a custom time under a minute or over 30 days', () => {
    expect(silenceRequest({ ...base, reason: '' })).toEqual({ ok: false, problem: null });
    expect(silenceRequest({ ...base, reason: 'ab' })).toEqual({ ok: false, problem: 'say why (at least 3 characters)' });
    expect(silenceRequest({ ...base, duration: 'custom', customMinutes: '0' })).toEqual({ ok: false, problem: 'a silence lasts at least 1 minute' });
    expect(silenceRequest({ ...base, duration: 'custom', customMinutes: String(31 * 24 * 60) })).toEqual({ ok: false, problem: 'a silence lasts at most 30 days' });
    expect(silenceRequest({ ...base, duration: 'custom', customMinutes: 'soon' })).toMatchObject({ ok: false });
  });
});

describe('alert row pieces', () => {
  it('sparkline: gaps break the line (never drawn as 0); fewer than two readings draw nothing', () => {
    const paths = sparklinePaths({ unit: 'tok/s', at: [0, 1, 2, 3, 4], values: [10, 20, null, 20, 10] }, 100, 20);
    expect(paths).toEqual(['0.0,20.0 25.0,0.0', '75.0,0.0 100.0,20.0']);
    expect(sparklinePaths({ unit: 'tok/s', at: [0, 1], values: [null, 5] }, 100, 20)).toBeNull();
    expect(sparklinePaths(undefined, 100, 20)).toBeNull();
  });
  it('incident and silence in words', () => {
    expect(incidentText('host_stale:gpu-a')).toBe('caused by telemetry stale on gpu-a');
    expect(incidentText(undefined)).toBeNull();
    expect(silenceScopeText(silence)).toBe('Slower per sequence on gpu-a');
    expect(silenceScopeText({ rule: 'all', host: null, serviceId: null, model: 'qwen' })).toBe('every rule on model qwen');
    expect(silenceOf(alert({ silencedBy: 'sil-1' }), [silence])).toBe(silence);
    expect(silenceOf(alert({ silencedBy: null }), [silence])).toBeNull();
  });
  it('renders the figure vs threshold and window, the sparkline, the incident, the acknowledgement and the silence with its end and reason', () => {
    const html = renderToStaticMarkup(
      createElement(AlertList, {
        alerts: [
          alert({
            windowMs: 300_000,
            series: { unit: 'tok/s per sequence', at: [1, 2, 3], values: [40, 35, 30] },
            incident: 'host_stale:gpu-a',
            ack: { by: 'operator:bo@cli', at: 1_700_000_000_000, note: 'on it' },
            silencedBy: 'sil-1',
          }),
        ],
        silences: [silence],
      }),
    );
    expect(html).toContain('30 vs threshold 42 tok/s per sequence over 5 min');
    expect(html).toContain('data-testid="alert-sparkline"');
    expect(html).toContain('caused by telemetry stale on gpu-a');
    expect(html).toMatch(/acknowledged by operator:bo@cli at .*: on it/);
    expect(html).toMatch(/silenced until .* — maintenance \| window/);
    // A static render has no transport: no buttons that could not act.
    expect(html).not.toContain('data-testid="alert-ack"');
  });
});

describe('handover export', () => {
  it('Markdown: alerts with duration, ack and silence; changes; silences; outside text cannot break a table', () => {
    const h: AlertHistory = {
      fromMs: 0,
      toMs: 3_600_000,
      alerts: [
        { id: 'a', kind: 'gpu_fault', severity: 'critical', host: 'tri-gpu', serviceId: null, message: 'Xid 13 | row', raisedAt: 0, clearedAt: 1_200_000, durationMs: 1_200_000, ackBy: 'operator:ann@web', ackAt: 5, silencedBy: null, incident: null },
        { id: 'b', kind: 'throughput', severity: 'warning', host: 'gpu-a', serviceId: 'qwen', message: 'slow\nsecond line', raisedAt: 10, clearedAt: null, durationMs: null, ackBy: null, ackAt: null, silencedBy: 'sil-1', incident: null },
      ],
      changes: [{ seq: 4, at: 20, type: 'alerts.silence.set', actor: 'operator:ann@web', target: 'gpu-a', summary: 'silenced throughput on gpu-a for 2 h — maintenance' }],
      silences: [silence],
      truncated: false,
    };
    const md = historyMarkdown(h);
    expect(md).toContain('| 20 min | critical | GPU fault | tri-gpu | Xid 13 \\| row | operator:ann@web | — | — |');
    expect(md).toContain('| open | warning | Slower per sequence | gpu-a/qwen | slow second line | — | sil-1 | — |');
    expect(md).toContain('| operator:ann@web | gpu-a | silenced throughput on gpu-a for 2 h — maintenance |');
    expect(md).toContain('| sil-1 | Slower per sequence on gpu-a |');
    expect(md).toContain('maintenance \\| window');
    expect(openFor(null)).toBe('open');
  });
});
