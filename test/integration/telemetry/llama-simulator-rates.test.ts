import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock, silentLogger } from '../../../src-main/core/base/index.js';
import { LlamaSimulator } from '../../../src-main/demo/index.js';
import { samplingParams } from '../../../src-main/demo/llama-shapes.js';
import { LlamaServerHttpSource, ServiceDeriver, httpGetFor } from '../../../src-main/core/telemetry/index.js';
import { urlClient } from '../../helpers/upstream.js';
import { tinyLlamaProfile } from '../../fixtures/llama-server/fixtures.js';
import { rateWindows, spacing, summary, worstRelative, type ReplayPoint } from '../../unit/core/telemetry/llama-rate-windows.js';

// The demo's llama-server simulator under the load of issue #27 (6 clients on
// 4 slots, requests of 5–256 tokens back to back, so requests end between
// readings), on a fake clock, read by the console's own source over the
// simulator's HTTP routes at 1 s, 2 s and irregular 0.8–1.6 s spacing. The
// console's generation rate must stay within 10 % of what the simulator
// generated over every 5 s window, and its KV figure within 5 points of the
// tokens the busy slots hold ÷ their context.

const LENGTHS = [37, 256, 90, 143, 12, 200, 61, 180, 5, 120, 230, 75];
const CLIENTS = 6;
const RUN_MS = 60_000;

let sim: LlamaSimulator | null = null;
afterEach(async () => {
  await sim?.dispose();
  sim = null;
});

async function run(times: number[]): Promise<ReplayPoint[]> {
  const clock = new FakeClock(0);
  let pid = 100;
  // 130 tok/s a slot, as the recorded tiny model on 2 cores
  const s = (sim = await LlamaSimulator.start({ profile: tinyLlamaProfile(), clock, logger: silentLogger, timeScale: 1, decodeSpeedFactor: 1, allocatePid: () => pid++ }));
  const engine = s.engine;
  let generated = 0;
  let n = 0;
  const client = (): void => {
    const length = LENGTHS[n % LENGTHS.length]!;
    engine.submit({
      promptKey: `prompt ${n}`,
      promptTokens: 20 + (n++ % 7),
      outputTokens: length,
      doneReason: 'length',
      limit: length,
      params: samplingParams({ maxTokens: length }),
      onToken: () => generated++,
      onFinish: client,
    });
  };
  for (let i = 0; i < CLIENTS; i++) client();
  const source = new LlamaServerHttpSource({ id: 'tiny/llama', get: httpGetFor(urlClient(`http://127.0.0.1:${s.port}`)), clock });
  const deriver = new ServiceDeriver();
  const nCtx = engine.nCtx * s.profile.parallel;
  const points: ReplayPoint[] = [];
  for (const t of times) {
    clock.advance(t - clock.now());
    const r = await source.scrape();
    if (!r.ok || !r.service) throw new Error(`reading at ${t} ms failed: ${r.ok ? 'no service' : r.stale.message}`);
    const f = deriver.push(r.service, r.atMs);
    points.push({
      atMs: r.atMs,
      genTokPerS: f.genTokPerS,
      kvPct: f.kvCachePct,
      generated,
      counter: engine.metrics.tokensPredictedTotal,
      truthKvPct: (100 * engine.tokensInUse()) / nCtx,
    });
  }
  return points;
}

describe('llama-server simulator: the console figures against its own counts', () => {
  const schedules: [string, number | { minMs: number; maxMs: number; seed: number }][] = [
    ['1 s', 1_000],
    ['2 s', 2_000],
    ['irregular 0.8–1.6 s', { minMs: 800, maxMs: 1_600, seed: 27 }],
  ];
  for (const [name, every] of schedules) {
    it(`${name}: generation tok/s within 10 % over every 5 s window, KV within 5 points`, async () => {
      const points = await run(spacing(3_000, 3_000 + RUN_MS, every));
      const windows = rateWindows(points);
      expect(windows.length).toBeGreaterThan(5);
      expect(worstRelative(windows, 'truth').error, summary(windows)).toBeLessThan(0.1);
      // The finished-request counter moves a whole request at a time: over 5 s at ~500 tok/s it is itself
      // ±11 % lumpy, so against it the bound holds over the whole run.
      const whole = rateWindows(points, points.at(-1)!.atMs - points[0]!.atMs)[0]!;
      expect(Math.abs(whole.console - whole.counter) / whole.counter, summary([whole])).toBeLessThan(0.02);
      for (const p of points) {
        expect(p.kvPct).not.toBeNull();
        expect(Math.abs(p.kvPct! - p.truthKvPct), `KV at ${p.atMs} ms`).toBeLessThan(5);
      }
    });
  }
});
