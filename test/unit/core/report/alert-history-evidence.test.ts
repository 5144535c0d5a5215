import { describe, expect, it } from 'vitest';
import { EvidenceSchema, ReportRequestSchema } from '../../../../src-preload/contract/index.js';
import { FakeClock } from '../../../../src-main/core/base/index.js';
import { buildEvidence, type ReportSources } from '../../../../src-main/core/report/builder.js';
import { renderHtml } from '../../../../src-main/core/report/render-html.js';
import { renderMarkdown } from '../../../../src-main/core/report/render-markdown.js';
import { openStore } from '../../../../src-main/core/store/index.js';

// Issue #30 item 5, exportable: the alerts section of evidence/4 carries each
// alert of the window with how long it was open, who acknowledged it and the
// silence that covered it, and the silences of the window (set before it and
// still in force included), read from the audit log the report vouches for.

const T0 = 1_764_000_000_000;
const MIN = 60_000;

function world() {
  const clock = new FakeClock(T0 - 60 * MIN);
  const store = openStore({ file: ':memory:', clock });
  const at = (minutes: number, type: Parameters<typeof store.audit.append>[0]['type'], target: string, payload: Record<string, unknown>, actor = 'system') => {
    clock.advance(T0 + minutes * MIN - clock.now());
    store.audit.append({ type, actor, target, payload });
  };
  // A silence set 30 min before the window, in force for 2 h; another host's silence is left out.
  at(-30, 'alerts.silence.set', 'gpu-a', { silenceId: 'sil-1', rule: 'throughput', host: 'gpu-a', serviceId: null, model: null, until: T0 + 90 * MIN, forMs: 120 * MIN, reason: 'kernel update' }, 'operator:ann@web');
  at(-20, 'alerts.silence.set', 'gpu-z', { silenceId: 'sil-2', rule: 'all', host: 'gpu-z', serviceId: null, model: null, until: T0 + 90 * MIN, forMs: 110 * MIN, reason: 'other host' }, 'operator:ann@web');
  at(5, 'alert.raised', 'gpu-a/qwen', { alertId: 'throughput:gpu-a/qwen', kind: 'throughput', severity: 'warning', message: 'slower per sequence', raisedAt: T0 + 5 * MIN, silencedBy: 'sil-1' });
  at(6, 'alert.acknowledged', 'gpu-a/qwen', { alertId: 'throughput:gpu-a/qwen', kind: 'throughput', host: 'gpu-a', serviceId: 'qwen', note: null }, 'operator:bo@cli');
  at(25, 'alert.cleared', 'gpu-a/qwen', { alertId: 'throughput:gpu-a/qwen', kind: 'throughput', severity: 'warning', message: 'slower per sequence', raisedAt: T0 + 5 * MIN, silencedBy: 'sil-1' });
  at(40, 'alert.raised', 'gpu-a', { alertId: 'gpu_hot:gpu-a#0', kind: 'gpu_hot', severity: 'critical', message: 'GPU0 at 91 °C', raisedAt: T0 + 40 * MIN });
  at(45, 'alerts.silence.ended', 'gpu-a', { silenceId: 'sil-1', rule: 'throughput', until: T0 + 90 * MIN, endedAt: T0 + 45 * MIN }, 'operator:ann@web');
  const sources = {
    now: () => T0 + 60 * MIN,
    actor: 'operator:alice@test',
    console: { version: '0.1.0', mode: 'web', demo: true },
    hosts: () => [{ label: 'gpu-a', pricePerHourUsd: null }],
    liveChecks: () => Promise.reject(new Error('not used')),
    offlineInventory: (label: string) => ({ label, address: `ops@${label}:22`, jumpHost: null, connection: 'connected', liveError: null, hostKeyFingerprint: null, pricePerHourUsd: null, gpus: [], services: [] }),
    auditEvents: (fromMs: number, toMs: number, prefixes?: readonly string[]) => store.audit.between({ fromMs, toMs, typePrefixes: prefixes ?? [], limit: 10_000 }),
    auditCoverage: () => ({ fromSeq: null, toSeq: null, headSeq: null, headHash: null, chainVerified: true, chainProblem: null }),
    benchRuns: () => [],
    trafficEvaluation: () => ({ source: 'proxy', fromMs: T0, toMs: T0 + 60 * MIN, figures: [] }),
    actions: () => [],
    series: () => null,
    hostCost: () => {
      throw new Error('not used');
    },
    gateMarks: () => new Map(),
  } as unknown as ReportSources;
  return { store, sources };
}

describe('alert history in the evidence (evidence/4)', () => {
  it('each alert with its duration, acknowledgement and silence; the silences of the window, from the audit log; rendered in Markdown and HTML', async () => {
    const { store, sources } = world();
    const e = await buildEvidence(ReportRequestSchema.parse({ fromMs: T0, toMs: T0 + 60 * MIN, live: false, sections: ['alerts'] }), sources);
    expect(EvidenceSchema.parse(e)).toEqual(e);
    expect(e.alertHistory!.alerts.map((a) => [a.id, a.durationMs, a.ackBy, a.silencedBy, a.clearedAt === null])).toEqual([
      ['gpu_hot:gpu-a#0', null, null, null, true],
      ['throughput:gpu-a/qwen', 20 * MIN, 'operator:bo@cli', 'sil-1', false],
    ]);
    expect(e.alertHistory!.silences).toEqual([
      { id: 'sil-1', rule: 'throughput', host: 'gpu-a', serviceId: null, model: null, reason: 'kernel update', by: 'operator:ann@web', createdAt: T0 - 30 * MIN, until: T0 + 90 * MIN, endedAt: T0 + 45 * MIN, endedBy: 'operator:ann@web' },
    ]);
    const md = renderMarkdown(e, { evidenceSha256: 'x'.repeat(64) });
    const section = md.slice(md.indexOf('## Alerts'));
    expect(section).toMatch(/### Alert history/);
    expect(section).toContain('| still open | critical | gpu\\_hot | gpu-a |');
    expect(section).toContain('| 20 min | warning | throughput | gpu-a/qwen |');
    expect(section).toContain('operator:bo@cli at ');
    expect(section).toMatch(/\| sil-1 \| throughput on gpu-a \|.*\| operator:ann@web \| kernel update \|/);
    const html = renderHtml(e, { evidenceSha256: 'x'.repeat(64) });
    expect(html).toContain('Alert history');
    expect(html).toContain('kernel update');
    store.close();
  });

  it('without the alerts section there is no history', async () => {
    const { store, sources } = world();
    const e = await buildEvidence(ReportRequestSchema.parse({ fromMs: T0, toMs: T0 + 60 * MIN, live: false, sections: ['inventory'] }), sources);
    expect(e.alertHistory).toBeNull();
    store.close();
  });
});
