import { describe, expect, it } from 'vitest';
import { EVENT_CHANNEL_NAMES, INVOKE_CHANNEL_NAMES } from '../../../src-preload/contract/channels-names.js';
import { eventChannels, invokeChannels, parseStrict } from '../../../src-preload/contract/index.js';

describe('contract channel table', () => {
  it('the preload name lists equal the schema tables', () => {
    expect([...INVOKE_CHANNEL_NAMES].sort()).toEqual(Object.keys(invokeChannels).sort());
    expect([...EVENT_CHANNEL_NAMES].sort()).toEqual(Object.keys(eventChannels).sort());
  });

  it('names follow capability.verb / capability.noun', () => {
    for (const name of [...INVOKE_CHANNEL_NAMES, ...EVENT_CHANNEL_NAMES]) expect(name).toMatch(/^[a-z]+\.[a-z][a-zA-Z]*$/);
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
