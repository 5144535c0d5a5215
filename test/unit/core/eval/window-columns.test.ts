// The evaluation of a window of proxy rows reads them as columns in one SQL
// pass; its figures must be exactly those of the per-row path (evaluate over
// samples built from each row), including failures, missing TTFT and token
// counts, rows without an upstream, other endpoints and the model filter.
import { describe, expect, it } from 'vitest';
import { createPrng } from '../../../../src-main/demo/text-gen.js';
import type { Evaluation } from '../../../../src-preload/contract/index.js';
import { evaluate, evaluateColumns, type EvalSample } from '../../../../src-main/core/eval/index.js';
import { requestWindows } from '../../../../src-main/core/proxy/index.js';
import { openStore } from '../../../../src-main/core/store/index.js';
import { FakeClock } from '../../../../src-main/core/base/index.js';

interface Row {
  id: string;
  ts: number;
  endpoint: string;
  model: string | null;
  upstream: string | null;
  status: number;
  error_code: string | null;
  queue_ms: number;
  ttft_ms: number | null;
  total_ms: number;
  tokens_out: number | null;
}

function rows(count: number): Row[] {
  const r = createPrng(5);
  return Array.from({ length: count }, (_, i) => {
    const status = r() < 0.08 ? 503 : 200;
    return {
      id: `r${i}`,
      ts: 1_000_000 + Math.floor(r() * 3_600_000),
      endpoint: r() < 0.1 ? '/v1/embeddings' : r() < 0.5 ? '/v1/chat/completions' : '/v1/completions',
      model: r() < 0.5 ? 'qwen' : 'gemma',
      upstream: r() < 0.05 ? null : `gpu-${Math.floor(r() * 3)}/svc${Math.floor(r() * 2)}`,
      status,
      error_code: status >= 400 ? 'tunnel_down' : r() < 0.02 ? 'stream_cut' : null,
      queue_ms: r() * 900 + 0.123456789,
      ttft_ms: r() < 0.3 ? null : r() * 400 + 1 / 3,
      total_ms: r() * 20_000 + 0.1 + 0.2,
      tokens_out: r() < 0.1 ? null : Math.floor(r() * 900),
    };
  });
}

/** The per-row path the columns replaced: every row of the window as a sample. */
function perRow(all: Row[], fromMs: number, toMs: number, model?: string): EvalSample[] {
  return all
    .filter((r) => r.ts >= fromMs && r.ts < toMs && r.endpoint.endsWith('completions') && (!model || r.model === model))
    .map((r) => ({
      startMs: r.ts,
      totalMs: r.total_ms,
      queueMs: r.queue_ms,
      ttftMs: r.ttft_ms,
      failed: r.status >= 400 || r.error_code !== null,
      completionTokens: r.tokens_out,
      jsonOk: null,
      schemaOk: null,
      host: r.upstream ? r.upstream.split('/')[0]! : null,
    }));
}

/** Equal figure by figure; a value may differ only in its last bits (the rows are summed in another order). */
function expectSameFigures(got: Evaluation, want: Evaluation): void {
  expect(got.figures.map((f) => ({ ...f, value: null }))).toEqual(want.figures.map((f) => ({ ...f, value: null })));
  got.figures.forEach((f, i) => {
    const w = want.figures[i]!.value;
    if (w === null) expect(f.value).toBeNull();
    else expect(Math.abs(f.value! - w)).toBeLessThanOrEqual(Math.abs(w) * 1e-12);
  });
}

describe('evaluation of a window of proxy rows, read as columns', () => {
  const store = openStore({ file: ':memory:', clock: new FakeClock(0) });
  const all = rows(3_000);
  const insert = store.db.prepare(
    `INSERT INTO requests (id, ts, client, class, endpoint, model, upstream, stream, status, error_code, queue_ms, ttft_ms, total_ms, tokens_in, tokens_out, bytes_in, bytes_out)
     VALUES (@id, @ts, 'c', 'batch', @endpoint, @model, @upstream, 1, @status, @error_code, @queue_ms, @ttft_ms, @total_ms, NULL, @tokens_out, 0, 0)`,
  );
  store.db.transaction(() => all.forEach((r) => insert.run(r)))();
  const windows = requestWindows(store.db);
  const priceOf = (h: string): number | null => (h === 'gpu-2' ? null : 2.5);

  it.each([
    ['the whole hour', 1_000_000, 4_600_000, undefined],
    ['a part of it, one model', 1_900_000, 3_100_000, 'qwen'],
    ['a window with nothing in it', 9_000_000, 9_100_000, undefined],
  ])('%s: every figure equals the per-row evaluation', (_name, fromMs, toMs, model) => {
    const columns = windows.completionColumns(fromMs, toMs, model);
    const got = evaluateColumns({ source: 's', fromMs, toMs, columns, priceOf });
    const want = evaluate({ source: 's', fromMs, toMs, samples: perRow(all, fromMs, toMs, model), priceOf });
    expectSameFigures(got, want);
  });

  it('a priced single host gives the cost per 1M figures (and the same as per row)', () => {
    const priced = (h: string): number | null => (h === 'gpu-1' ? 3 : 3);
    const columns = windows.completionColumns(1_000_000, 4_600_000, 'gemma');
    const got = evaluateColumns({ source: 's', fromMs: 1_000_000, toMs: 4_600_000, columns, priceOf: priced });
    const want = evaluate({ source: 's', fromMs: 1_000_000, toMs: 4_600_000, samples: perRow(all, 1_000_000, 4_600_000, 'gemma'), priceOf: priced });
    expectSameFigures(got, want);
    expect(got.figures.find((f) => f.key === 'costPerRequest')!.value).toBeGreaterThan(0);
    expect(got.figures.find((f) => f.key === 'latencyP95')!.samples).toBeGreaterThan(100);
  });
});
