import { describe, expect, it } from 'vitest';
import { eventChannels, invokeChannels, parseStrict } from '../../../src-preload/contract/index.js';

describe('contract channel table', () => {
  it('invoke and event names do not collide', () => {
    const invoke = new Set(Object.keys(invokeChannels));
    expect(Object.keys(eventChannels).filter((e) => invoke.has(e))).toEqual([]);
  });

  it('names follow capability.verb / capability.noun', () => {
    for (const name of [...Object.keys(invokeChannels), ...Object.keys(eventChannels)]) expect(name).toMatch(/^[a-z]+\.[a-z][a-zA-Z]*$/);
  });

  it('inputs are strict: unknown keys are refused', () => {
    const r = parseStrict(invokeChannels['hosts.connect'].input, { label: 'x', extra: 1 });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.message).toMatch(/extra|unrecognized/i);
  });

  it('audit.list fills its default limit and bounds it', () => {
    const ok = parseStrict(invokeChannels['audit.list'].input, {});
    expect(ok).toEqual({ ok: true, data: { limit: 100 } });
    expect(parseStrict(invokeChannels['audit.list'].input, { limit: 5000 }).ok).toBe(false);
  });
});
