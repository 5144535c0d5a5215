import { describe, expect, it } from 'vitest';
import { T0, replay, type Trace } from './replay.js';
import { randomLoad, sweepLevels, type HostSpec } from './fleet-sim.js';

// Issue #30, "Measured, not assumed": no alert across 24 simulated hours of
// normal traffic on three hosts and five services (vLLM with its inter-token
// histogram, llama-server without): c = 0…8 in segments of 20–300 s, a fifth
// of them idle, bursts to 8, per-sequence speed with ±5 % noise, the proxy's
// error window at 0.1 % failures, GPUs at 55–84 °C.
//
// Ticks every 5 s, not the 1 s poll: 17,280 rounds keep it to seconds in
// `npm test` (the labelled fault traces in alert-traces.test.ts, with 20 min
// of normal traffic before each fault, run at 1 s). Every rule's window and
// sustain is several ticks long at 5 s; the degradation window counts each
// tick's 5 s as busy time.

const qwen = { id: 'qwen', model: 'Qwen3.6-27B-FP8', kind: 'vllm' as const, s1: 30 };
const gemma = { id: 'gemma', model: 'gemma-3-27b', kind: 'llama' as const, s1: 40 };
const hosts: HostSpec[] = [
  { label: 'tri-gpu', services: [qwen], gpus: 2 },
  { label: 'strix', services: [gemma], gpus: 1 },
  {
    label: 'l20-poc',
    services: [
      { id: 'chat', model: 'chat-8b', kind: 'vllm', s1: 60 },
      { id: 'code', model: 'code-14b', kind: 'vllm', s1: 45 },
      { id: 'embed', model: 'small-3b', kind: 'llama', s1: 90 },
    ],
    gpus: 1,
  },
];
const DAY = 86_400_000;

const NORMAL: Trace = {
  name: 'normal traffic, 24 h, 3 hosts / 5 services',
  hosts,
  load: randomLoad(7, DAY, 5),
  faults: [],
  labels: [],
  durationMs: DAY,
  tickMs: 5000,
  baselines: hosts.flatMap((h) => h.services.map((s) => ({ model: s.model, levels: sweepLevels(s.s1) }))),
  seed: 11,
};

describe('alert replay: 24 simulated hours of normal traffic', () => {
  it(NORMAL.name, () => {
    const started = performance.now();
    const r = replay(NORMAL);
    console.log(`\nalert replay, normal day: ${r.ticks.toLocaleString('en')} ticks at 5 s, ${r.events.length} alert events, ${r.falseAlarms.length} false alarms (${Math.round(performance.now() - started)} ms)`);
    expect(r.falseAlarms.map((a) => `${a.id} at +${Math.round((a.raisedAt - T0) / 1000)} s: ${a.message}`)).toEqual([]);
    expect(r.events).toEqual([]);
  }, 120_000);
});
