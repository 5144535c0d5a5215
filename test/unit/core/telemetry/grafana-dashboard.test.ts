import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderProxyMetrics } from '../../../../src-main/core/proxy/metrics-text.js';
import { renderFleetExposition } from '../../../../src-main/core/telemetry/index.js';

// The Grafana dashboard shipped in resources/grafana: valid dashboard JSON with
// a Prometheus datasource variable, and every series it queries is one the
// console exports (so a rename on one side fails here, not in someone's Grafana).

interface Target {
  expr: string;
  datasource?: { type: string; uid: string };
}
interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { h: number; w: number; x: number; y: number };
  datasource?: { type: string; uid: string };
  targets?: Target[];
}

const file = join(import.meta.dirname, '../../../../resources/grafana/gpu-console-dashboard.json');
const dashboard = JSON.parse(readFileSync(file, 'utf8')) as {
  uid: string;
  title: string;
  schemaVersion: number;
  templating: { list: { name: string; type: string; query: unknown }[] };
  panels: Panel[];
};

/** Every expression of the dashboard, panel by panel. */
function dashboardQueries(): { panel: string; expr: string }[] {
  return dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title, expr: t.expr })));
}

const exported = new Set(
  [...`${renderFleetExposition({ at: 0, hosts: [] })}${renderProxyMetrics({ upstreams: [] } as never, new Map(), new Map())}`.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!),
);

describe('resources/grafana/gpu-console-dashboard.json', () => {
  it('is a dashboard with a Prometheus datasource variable that every panel and query uses', () => {
    expect(dashboard).toMatchObject({ uid: 'gpu-console-fleet', schemaVersion: expect.any(Number) });
    const ds = dashboard.templating.list.find((v) => v.type === 'datasource');
    expect(ds).toMatchObject({ name: 'datasource', query: 'prometheus' });
    for (const v of dashboard.templating.list.filter((x) => x.type === 'query')) expect(JSON.stringify(v)).toContain('${datasource}');
    const panels = dashboard.panels.filter((p) => p.type !== 'row');
    expect(panels.length).toBeGreaterThan(10);
    for (const p of panels) {
      expect(p.datasource, p.title).toEqual({ type: 'prometheus', uid: '${datasource}' });
      expect(p.targets!.length, p.title).toBeGreaterThan(0);
      for (const t of p.targets!) expect(t.datasource, p.title).toEqual({ type: 'prometheus', uid: '${datasource}' });
    }
  });

  it('panel ids are unique and panels do not overlap on the 24-column grid', () => {
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    const cells = new Set<string>();
    for (const p of dashboard.panels) {
      const g = p.gridPos;
      expect(g.x + g.w, p.title).toBeLessThanOrEqual(24);
      for (let x = g.x; x < g.x + g.w; x++) {
        for (let y = g.y; y < g.y + g.h; y++) {
          expect(cells.has(`${x},${y}`), `${p.title} overlaps at ${x},${y}`).toBe(false);
          cells.add(`${x},${y}`);
        }
      }
    }
  });

  it('queries only series the console exports, and shows the fleet series of /metrics', () => {
    const used = new Set(dashboardQueries().flatMap((q) => [...q.expr.matchAll(/gpu_console_[a-z_]+/g)].map((m) => m[0])));
    for (const name of used) expect(exported.has(name), `${name} is not exported`).toBe(true);
    for (const name of [
      'gpu_console_host_connected',
      'gpu_console_gpu_memory_used_bytes',
      'gpu_console_gpu_utilization_ratio',
      'gpu_console_gpu_power_watts',
      'gpu_console_gpu_temperature_celsius',
      'gpu_console_service_up',
      'gpu_console_service_requests_running',
      'gpu_console_service_requests_waiting',
      'gpu_console_service_kv_cache_usage_ratio',
      'gpu_console_service_generation_tokens_per_second',
      'gpu_console_tunnel_state',
      'gpu_console_tunnel_probe_latency_seconds',
    ]) {
      expect(used.has(name), `${name} is on no panel`).toBe(true);
    }
  });
});
