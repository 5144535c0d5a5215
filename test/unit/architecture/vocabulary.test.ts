import { describe, expect, it } from 'vitest';
import {
  GPU_FIGURES,
  HOST_FIGURES,
  MetricNameSchema,
  SERVICE_FIGURES,
  gpuSeries,
  hostSeries,
  parseSeriesName,
  serviceSeries,
  type HostView,
  type ProxyStats,
} from '../../../src-preload/contract/index.js';
import { AUDIT_EVENT_TYPES } from '../../../src-main/core/store/index.js';
import { hostValuesOf, proxyValues } from '../../../src-main/core/telemetry/index.js';
import { literalsIn } from '../../helpers/source-scan.js';
import { hostStateFromView } from '../../helpers/fleet-state.js';

// Audit event types and series names are vocabulary (STYLE "Vocabulary is
// typed"): declared once (core/store/audit-types.ts; the contract's
// series-names.ts), and everyone else builds them from there. The compiler
// already refuses an undeclared audit type or figure; these tests catch what
// it cannot: a name spelled as a literal beside the vocabulary, a declared
// name nobody writes, a recorded name the contract would not accept.

const SOURCES = ['src-main', 'src-preload', 'src-renderer/src'];
const isTest = (f: string) => /\.test\.tsx?$/.test(f);

describe('audit event types', () => {
  it('are unique dotted lower-case names (the log refuses anything else)', () => {
    expect(new Set(AUDIT_EVENT_TYPES).size).toBe(AUDIT_EVENT_TYPES.length);
    expect(AUDIT_EVENT_TYPES.filter((t) => !/^[a-z][a-z0-9_-]*(\.[a-z0-9][a-z0-9_-]*)*$/.test(t))).toEqual([]);
  });

  it('are each written somewhere in core, as a literal or by a template family (`alert.${…}`)', () => {
    const lits = literalsIn(['src-main'], (f) => isTest(f) || f === 'src-main/core/store/audit-types.ts');
    const literal = new Set(lits.filter((l) => !l.template).map((l) => l.text));
    const families = lits.filter((l) => l.template && /^[a-z.]+\.\$\{\}$/.test(l.text)).map((l) => l.text.slice(0, -3));
    expect(families).toEqual(expect.arrayContaining(['alert.', 'lifecycle.', 'bench.run.']));
    const unwritten = AUDIT_EVENT_TYPES.filter((t) => !literal.has(t) && !families.some((f) => t.startsWith(f) && !t.slice(f.length).includes('.')));
    expect(unwritten).toEqual([]);
  });
});

function hostView(): HostView {
  const gpu = { index: 0, name: 'AMD', memoryUsedMiB: 1, memoryTotalMiB: 2, utilizationPct: 3, powerW: 4, temperatureC: 5, gttUsedMiB: 6, gttTotalMiB: 7 };
  const svc = { id: 'qwen-2_b', stale: false, requestsRunning: 1, requestsWaiting: 0, kvCachePct: 5, promptTokensPerS: 1, generationTokensPerS: 2 };
  return { label: 'h', gpus: [gpu], gpuStale: false, services: [svc, { ...svc, id: 'old', stale: true }], pricePerHourUsd: 2 } as unknown as HostView;
}

describe('series names', () => {
  it('build and parse back through the vocabulary', () => {
    for (const f of GPU_FIGURES) expect(parseSeriesName(gpuSeries(7, f))).toEqual({ scope: 'gpu', index: 7, figure: f });
    for (const f of SERVICE_FIGURES) expect(parseSeriesName(serviceSeries('q-1', f))).toEqual({ scope: 'svc', serviceId: 'q-1', figure: f });
    for (const f of HOST_FIGURES) expect(parseSeriesName(hostSeries(f))).toEqual({ scope: 'host', figure: f });
    for (const bad of ['gpu.0.vram', 'svc.q.gen_tok', 'host.connect', 'svc.a.b.gen_tok_s', 'gpu.x.util_pct', 'gen_tok_s']) {
      expect(parseSeriesName(bad), bad).toBeNull();
      expect(MetricNameSchema.safeParse(bad).success, bad).toBe(false);
    }
  });

  it('every name the recorder writes is in the contract vocabulary', () => {
    const stats = {
      upstreams: [
        {
          label: 'h',
          serviceId: 'qwen-2_b',
          queued: 1,
          classes: ['interactive', 'system', 'batch'].map((c) => ({ class: c, waitP50Ms: 1, waitP95Ms: 2, ttftP50Ms: 3, ttftP95Ms: 4 })),
          latency: { ttftP50Ms: 1, ttftP95Ms: 2, e2eP50Ms: 3, e2eP95Ms: 4 },
        },
      ],
    } as unknown as ProxyStats;
    const names = Object.keys(proxyValues('h', stats, hostValuesOf(hostStateFromView(hostView(), 0))));
    expect(names.length).toBeGreaterThan(40);
    expect(names.filter((n) => !MetricNameSchema.safeParse(n).success)).toEqual([]);
  });

  it('no source spells a series name: it is built with gpuSeries / serviceSeries / hostSeries', () => {
    const figures = new Set<string>([...GPU_FIGURES, ...SERVICE_FIGURES, ...HOST_FIGURES]);
    const spelled = literalsIn(SOURCES, (f) => isTest(f) || f === 'src-preload/contract/series-names.ts')
      .filter((l) => {
        const m = /^(gpu\.(?:\d+|\$\{\})|svc\.[^.]+|host)\.([a-z0-9_]+)$/.exec(l.text) ?? /^(gpu|svc)\.\$\{\}\.?(.*)$/.exec(l.text);
        return m !== null && (m[2] === '' || figures.has(m[2]!) || m[1] !== 'host');
      })
      .map((l) => `${l.file}:${l.line} ${l.template ? '`' : "'"}${l.text}${l.template ? '`' : "'"}`);
    expect(spelled).toEqual([]);
  });
});
