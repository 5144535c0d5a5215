import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Api } from '../../../src-main/core/api.js';
import type { App } from '../../../src-main/core/app.js';
import { startTestApp, type TestApp } from '../../helpers/app.js';

// #26.5 through the contract, as the Benchmarks view and the Reports view call
// it: a 1e308 GuideLLM import is refused with the field named; a row planted
// damaged in the database (what the old import wrote) does not break
// bench.listRuns or reports.preview, is named in both, and can be deleted.

let dir: string;
let core: TestApp;
let app: App;
let api: Api;

const dist = (v: number) => ({ successful: { median: v, mean: v, percentiles: { p50: v, p95: v } } });
const guidellm = (tokS: number) =>
  JSON.stringify({
    benchmarks: [
      {
        args: { strategy: { type_: 'concurrent', streams: 2 } },
        duration: 10,
        request_totals: { successful: 4, errored: 0 },
        metrics: { time_to_first_token_ms: dist(100), request_latency: dist(1), inter_token_latency_ms: dist(20), output_tokens_per_second: dist(tokS), requests_per_second: dist(0.4) },
      },
    ],
  });

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gc-bench-damaged-'));
  core = await startTestApp({ dataDir: dir, configFile: null });
  ({ app, api } = core);
}, 60_000);

afterAll(async () => {
  await core?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

describe('a damaged benchmark run', () => {
  let goodId: string;
  let badId: string;

  it('a GuideLLM report with a mean of 1e308 is refused, naming the field; nothing is stored', async () => {
    const out = await api.invoke('bench.importGuidellm', { text: guidellm(1e308), name: 'crafted' });
    expect(out).toMatchObject({ ok: false, error: { code: 'BENCH_IMPORT_OUT_OF_RANGE', message: expect.stringContaining('output_tokens_per_second') } });
    expect(await api.invoke('bench.listRuns', {})).toMatchObject({ ok: true, data: { runs: [], damaged: [] } });
  });

  it('a row that fails on read is listed as damaged beside the good runs; getRun names the damage', async () => {
    const good = await api.invoke('bench.importGuidellm', { text: guidellm(40), name: 'good' });
    const bad = await api.invoke('bench.importGuidellm', { text: guidellm(40), name: 'to be damaged' });
    if (!good.ok || !bad.ok) throw new Error('imports failed');
    goodId = (good.data as { runId: string }).runId;
    badId = (bad.data as { runId: string }).runId;
    // What an old import could store for a duration of 1e308: Infinity, written by JSON as null.
    const levels = JSON.parse((app.store.db.prepare('SELECT levels FROM bench_runs WHERE id = ?').get(badId) as { levels: string }).levels) as Array<Record<string, unknown>>;
    levels[0]!.wallMs = null;
    app.store.db.prepare('UPDATE bench_runs SET levels = ? WHERE id = ?').run(JSON.stringify(levels), badId);

    const listed = await api.invoke('bench.listRuns', {});
    expect(listed).toMatchObject({
      ok: true,
      data: { runs: [{ id: goodId }], damaged: [{ id: badId, name: 'to be damaged', problem: expect.stringContaining('levels.0.wallMs') }] },
    });
    expect(await api.invoke('bench.getRun', { runId: badId })).toMatchObject({ ok: false, error: { code: 'BENCH_RUN_DAMAGED', message: expect.stringContaining(badId) } });
    expect(await api.invoke('bench.getRun', { runId: goodId })).toMatchObject({ ok: true });
  });

  it('reports.preview over its window builds, with the good run in it and a note naming the damaged one', async () => {
    const now = Date.now();
    const out = await api.invoke('reports.preview', { request: { fromMs: now - 3_600_000, toMs: now + 60_000, sections: ['benchmarks'], live: false } });
    if (!out.ok) throw new Error(`preview failed: ${out.error.code} ${out.error.message}`);
    const { evidence, html } = out.data as { evidence: { benchmarks: Array<{ id: string }>; notes: string[] }; html: string };
    expect(evidence.benchmarks.map((r) => r.id)).toEqual([goodId]);
    expect(evidence.notes).toContainEqual(expect.stringContaining(`Benchmark run ${badId} (to be damaged) is damaged and left out: levels.0.wallMs`));
    expect(html).toContain(`Benchmark run ${badId}`);
  });

  it('bench.deleteRun deletes it, audited with the damage; the list is clean again', async () => {
    expect(await api.invoke('bench.deleteRun', { runId: badId })).toEqual({ ok: true, data: { runId: badId } });
    expect(await api.invoke('bench.listRuns', {})).toMatchObject({ ok: true, data: { runs: [{ id: goodId }], damaged: [] } });
    const audited = app.store.db.prepare("SELECT payload FROM audit_events WHERE type = 'bench.run.deleted'").all() as Array<{ payload: string }>;
    expect(audited.map((r) => JSON.parse(r.payload) as unknown)).toEqual([{ runId: badId, damaged: expect.stringContaining('wallMs') }]);
  });
});
