import { describe, expect, it } from 'vitest';
import { LlamaMetrics, cppDouble } from '../../../src-main/demo/llama-metrics.js';
import { LOADING_BODY, llamaError, modelsBody, propsBody, samplingParams, slotBody } from '../../../src-main/demo/llama-shapes.js';
import {
  llamaHealthFromResponse,
  llamaSlotsTokensInUse,
  parseLlamaProps,
  parseLlamaSlots,
  parsePrometheusText,
  readLlamaServerMetrics,
} from '../../../src-main/core/telemetry/index.js';
import { fixtureJson, fixtureText, shapeText, tinyLlamaProfile } from '../../fixtures/llama-server/fixtures.js';

// The recorded b10573 answers, read by the console's own parsers, and the
// simulator's bodies built for the recorded server's settings, compared with them.

describe('the console parsers on the recorded llama-server answers', () => {
  it('reads /slots idle and busy (next_token as a one-element array)', () => {
    const idle = parseLlamaSlots(fixtureText('slots.json'))!;
    expect(idle.unreadable).toBe(0);
    expect(idle.slots).toMatchObject([0, 1, 2, 3].map((id) => ({ id, nCtx: 1024, isProcessing: false, promptTokens: null, decodedTokens: null })));
    expect(llamaSlotsTokensInUse(idle.slots)).toBe(0);
    const busy = parseLlamaSlots(fixtureText('slots-busy.json'))!;
    expect(busy.slots.map((s) => [s.isProcessing, s.promptTokens, s.decodedTokens])).toEqual(Array(4).fill([true, 92, 72]));
    // n_prompt_tokens (92) is the slot's sequence: 20 prompt tokens (processed + cache) and the 72 decoded
    expect(busy.slots.map((s) => (s.promptTokensProcessed ?? 0) + (s.promptTokensCached ?? 0) + (s.decodedTokens ?? 0))).toEqual(Array(4).fill(92));
    expect(llamaSlotsTokensInUse(busy.slots)).toBe(4 * 92);
  });

  it('reads /props, /health and the loading 503', () => {
    expect(parseLlamaProps(fixtureText('props.json'))).toMatchObject({ nCtx: 1024, totalSlots: 4, model: 'tiny-random-llama', buildInfo: 'b10573-d775b89', isSleeping: false });
    expect(llamaHealthFromResponse(200, fixtureText('health.json'))).toBe('ok');
    expect(llamaHealthFromResponse(503, fixtureText('health-loading-503.json'))).toBe('loading');
  });

  it('reads every recorded /metrics: no unreadable line, the gauges and counters', () => {
    const read = (name: string) => {
      const parsed = parsePrometheusText(fixtureText(name));
      expect(parsed.errors, name).toBe(0);
      return readLlamaServerMetrics(parsed.families);
    };
    expect(read('metrics-idle.txt')).toMatchObject({ running: 0, waiting: 0, promptTokensTotal: 0, generationTokensTotal: 0 });
    expect(read('metrics-busy.txt')).toMatchObject({ running: 4, waiting: 0, promptTokensTotal: 242, generationTokensTotal: 2608 });
    expect(read('metrics-busy-deferred.txt')).toMatchObject({ running: 4, waiting: 2, promptTokensTotal: 317, generationTokensTotal: 6192 });
    expect(read('metrics-idle-after-load.txt')).toMatchObject({ running: 0, waiting: 0, promptTokensTotal: 291, generationTokensTotal: 6192 });
  });
});

describe('the simulator bodies against the recordings', () => {
  const profile = tinyLlamaProfile();

  it('renders /metrics of a fresh process byte for byte as recorded', () => {
    expect(new LlamaMetrics().render({ processing: 0, deferred: 0 })).toBe(fixtureText('metrics-idle.txt'));
  });

  it('prints numbers as a C++ stream prints a double (%g, 6 digits)', () => {
    expect([0, 6192, 0.162005, 29.2145, 183.013, 1.70438, 0.1, 1e6, 1234567, 0.0001, 0.00001234, 2224.5912].map(cppDouble)).toEqual([
      '0',
      '6192',
      '0.162005',
      '29.2145',
      '183.013',
      '1.70438',
      '0.1',
      '1e+06',
      '1.23457e+06',
      '0.0001',
      '1.234e-05',
      '2224.59',
    ]);
  });

  it('uses the recorded metric names, HELP texts and types, in order', () => {
    const m = new LlamaMetrics();
    m.onPromptEval(20, 72, 30, 92);
    m.onToken(2);
    m.onPrediction(256, 500);
    const ours = parsePrometheusText(m.render({ processing: 4, deferred: 2 })).families.map((f) => [f.name, f.type, f.help]);
    for (const name of ['metrics-idle.txt', 'metrics-busy.txt', 'metrics-busy-deferred.txt', 'metrics-idle-after-load.txt']) {
      expect(ours, name).toEqual(parsePrometheusText(fixtureText(name)).families.map((f) => [f.name, f.type, f.help]));
    }
  });

  it('builds /props with the recorded keys, types and values for the recorded server', () => {
    const recorded = fixtureJson<Record<string, unknown>>('props.json');
    const ours = propsBody(profile, { isSleeping: false, mediaMarker: String(recorded['media_marker']) });
    expect(shapeText(ours)).toBe(shapeText(recorded));
    // Everything but the per-process media marker is what that server said.
    expect(ours).toEqual(recorded);
    expect(parseLlamaProps(JSON.stringify(propsBody(profile, { isSleeping: true, mediaMarker: 'x' })))!.isSleeping).toBe(true);
  });

  it('builds /v1/models as recorded; meta is null until the model is loaded', () => {
    const recorded = fixtureJson<{ data: { created: number }[] }>('models.json');
    const ours = modelsBody(profile, { loaded: true, nowSec: recorded.data[0]!.created });
    expect(ours).toEqual(recorded);
    const loading = modelsBody(profile, { loaded: false, nowSec: 1 });
    expect(loading.data[0]!.meta).toBeNull();
    expect(Object.keys(loading.data[0]!)).toEqual(Object.keys(recorded.data[0]!));
  });

  it('builds idle and busy /slots entries with the recorded shape', () => {
    const idle = fixtureJson<unknown[]>('slots.json');
    expect([0, 1, 2, 3].map((id) => slotBody(id, 1024, null))).toEqual(idle);
    const busy = fixtureJson<Record<string, unknown>[]>('slots-busy.json');
    const task = {
      idTask: 2625,
      promptTokens: 92,
      promptTokensProcessed: 20,
      cachedTokens: 0,
      params: samplingParams({ seed: 44, maxTokens: 256, stream: true, chatFormat: 'peg-native', reasoningFormat: 'deepseek' }),
      remaining: 184,
      decoded: 72,
    };
    const ours = slotBody(0, 1024, task);
    expect(shapeText(ours)).toBe(shapeText(busy[0]));
    expect(ours).toEqual(busy[0]);
  });

  it('writes error bodies in the two recorded key orders', () => {
    expect(JSON.stringify(LOADING_BODY)).toBe(JSON.stringify(fixtureJson('health-loading-503.json')));
    expect(JSON.stringify(llamaError(503, 'no slot available', 'unavailable_error'))).toBe(JSON.stringify(fixtureJson('slots-fail_on_no_slot-busy-503.json')));
    const recorded500 = fixtureText('chat-error-500.txt').trim().split(/\r?\n/).at(-1);
    expect(JSON.stringify(llamaError(500, 'The model produced output that does not match the expected peg-native format', 'server_error'))).toBe(recorded500);
  });
});
