import { describe, expect, it } from 'vitest';
import { proposalKinds } from '../../../../src-renderer/src/app/palette-items.js';
import {
  cacheFigures,
  enginesLabel,
  figuresNote,
  kindWithVersion,
  kvTitle,
  prefixHitText,
  rateBasisTitle,
  sleepView,
  slotMismatch,
} from '../../../../src-renderer/src/features/fleet/service-facts.js';
import { service } from '../fixtures/fleet.js';

const llama = (overrides: Parameters<typeof service>[1] = {}) => service('coder', { kind: 'llama-server', sleepControl: 'automatic', ...overrides });

describe('service facts', () => {
  it('llama-server that sleeps by itself: its state, the note, and no sleep/wake to offer', () => {
    expect(sleepView(llama({ sleep: 'awake' }))).toMatchObject({ tone: 'ok', text: 'awake', note: 'sleeps by itself when idle', offersSleepWake: false });
    expect(sleepView(llama({ sleep: 'asleep-2' }))).toMatchObject({ tone: 'info', text: 'asleep · unloaded', note: 'wakes by itself on a request', offersSleepWake: false });
    expect(sleepView(llama({ sleep: 'unknown' }))).toMatchObject({ text: 'sleep ?', offersSleepWake: false });
    expect(sleepView(llama()).title).toMatch(/--sleep-idle-seconds/);
  });

  it('vLLM sleep is manual: levels shown, the console may propose', () => {
    expect(sleepView(service('q', { sleep: 'asleep-1', sleepControl: 'manual' }))).toMatchObject({ text: 'asleep · L1', note: null, offersSleepWake: true });
    // an older main without sleepControl: as before
    expect(sleepView(service('q', { sleep: 'awake' })).offersSleepWake).toBe(true);
    // llama-server router: loaded / unloaded on request, no levels
    expect(sleepView(llama({ sleepControl: 'manual', sleep: 'asleep-2' })).text).toBe('asleep · unloaded');
    expect(sleepView(service('q', { sleepControl: 'none', sleep: 'unknown' }))).toMatchObject({ text: 'no sleep mode', offersSleepWake: false });
  });

  it('the palette proposes no sleep or wake for a server that sleeps by itself', () => {
    expect(proposalKinds(llama({ sleep: 'awake' }))).toEqual(['offload', 'restart']);
    expect(proposalKinds(llama({ sleep: 'asleep-2' }))).toEqual(['restart']);
    expect(proposalKinds(service('q', { sleep: 'awake', sleepControl: 'manual' }))).toEqual(['sleep', 'offload', 'restart']);
    expect(proposalKinds(service('q', { sleep: 'asleep-1', sleepControl: 'manual' }))).toEqual(['wake', 'restart']);
    // once the drivers are listed, only what the service's driver can do
    expect(proposalKinds(llama({ sleep: 'awake' }), ['restart'])).toEqual(['restart']);
    expect(proposalKinds(service('q', { sleep: 'awake', sleepControl: 'manual' }), ['sleep', 'wake', 'restart'])).toEqual(['sleep', 'restart']);
  });

  it('shows a slot mismatch only when the server reports a different count', () => {
    expect(slotMismatch(llama({ slots: 4, slotsReported: 2 }))).toBe('server reports 2 slots, config says 4');
    expect(slotMismatch(llama({ slots: 4, slotsReported: 1 }))).toBe('server reports 1 slot, config says 4');
    expect(slotMismatch(llama({ slots: 4, slotsReported: 4 }))).toBeNull();
    expect(slotMismatch(llama({ slots: 4, slotsReported: null }))).toBeNull();
    expect(slotMismatch(service('q'))).toBeNull();
  });

  it('names data-parallel engines only when there is more than one', () => {
    expect(enginesLabel(service('q', { engines: 2 }))).toBe('2 engines');
    expect(enginesLabel(service('q', { engines: 1 }))).toBeNull();
    expect(enginesLabel(service('q', { engines: null }))).toBeNull();
    expect(enginesLabel(service('q'))).toBeNull();
  });

  it('says how an estimated KV figure is estimated', () => {
    expect(kvTitle(llama({ kvCacheEstimated: true }))).toMatch(/^Estimate: context tokens in use per slot ÷ n_ctx, from llama-server \/slots/);
    expect(kvTitle(service('q', { kvCacheEstimated: false }))).toBe('KV-cache usage reported by vLLM');
  });

  it('prefix hit: "since start" when cumulative, a dash when unknown', () => {
    expect(prefixHitText({ prefixHitPct: 42.25, prefixHitScope: 'window' })).toBe('42.3%');
    expect(prefixHitText({ prefixHitPct: 42, prefixHitScope: 'cumulative' })).toBe('42.0% since start');
    expect(prefixHitText({ prefixHitPct: null, prefixHitScope: 'cumulative' })).toBe('—');
    expect(prefixHitText({})).toBe('—');
  });

  it('cache figures: spec acceptance only when the server drafts; unknown is a dash, not 0', () => {
    const plain = cacheFigures(service('q', { prefixHitPct: null, promptCacheReusePct: null, specAcceptancePct: null }));
    expect(plain.map((f) => [f.id, f.text, f.value])).toEqual([
      ['prefix-hit', '—', null],
      ['prompt-cache', '—', null],
    ]);
    const spec = cacheFigures(service('q', { prefixHitPct: 12, prefixHitScope: 'window', promptCacheReusePct: 30.04, specAcceptancePct: 0 }));
    expect(spec.map((f) => f.text)).toEqual(['12.0%', '30.0%', '0.0%']);
    expect(spec[2]!.label).toBe('Spec. acceptance');
  });

  it('rates say whether running requests are included', () => {
    expect(rateBasisTitle({ rateBasis: 'live' }, 'Generation tokens per second')).toMatch(/includes the progress of running requests/);
    expect(rateBasisTitle({ rateBasis: 'counters' }, 'Gen')).toMatch(/counters/);
    expect(rateBasisTitle({ rateBasis: null }, 'Gen')).toBe('Gen');
  });

  it('kind with the server version when known', () => {
    expect(kindWithVersion(service('q', { version: '0.11.0' }))).toBe('vllm 0.11.0');
    expect(kindWithVersion(llama({ version: null }))).toBe('llama-server');
  });
});

describe('service facts of the kinds without engine figures', () => {
  it('an openai row says its figures are the proxy\'s; a TEI row says what an embedding server has; the others say nothing', () => {
    expect(figuresNote(service('gw', { kind: 'openai' }))).toBe("OpenAI-compatible server: no engine figures (health only); TTFT and latency are measured at the console's proxy");
    expect(figuresNote(service('emb', { kind: 'tei' }))).toBe('TEI embedding server: queue, requests, input tokens and latency; no KV cache, TTFT or generation');
    expect(figuresNote(service('sg', { kind: 'sglang' }))).toBeNull();
    expect(figuresNote(service('q', { kind: 'vllm' }))).toBeNull();
    expect(kvTitle({ kind: 'sglang', kvCacheEstimated: false })).toBe('KV-pool token usage reported by SGLang (sglang:token_usage)');
  });
});
