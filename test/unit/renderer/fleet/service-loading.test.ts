import { describe, expect, it } from 'vitest';
import { loadingView } from '../../../../src-renderer/src/features/fleet/service-facts.js';
import { HEALTH_TEXT, HEALTH_TONE } from '../../../../src-renderer/src/features/fleet/service-state.js';
import { ServiceViewSchema } from '../../../../src-preload/contract/index.js';
import { service } from '../fixtures/fleet.js';

// Issue #27 finding 7, as the fleet card and the host view say it: a server
// loading its model reads "loading model" (words, not only a colour) with how
// long, instead of a sleep state and a health of "down".

describe('a service loading its model, on screen', () => {
  const loading = service('coder', { kind: 'llama-server', health: 'loading', loadingSince: 1_000, sleep: 'unknown', generationTokensPerS: null });

  it('the contract carries the state and since when', () => {
    expect(ServiceViewSchema.parse(loading)).toMatchObject({ health: 'loading', loadingSince: 1_000 });
    expect(() => ServiceViewSchema.parse({ ...loading, health: 'starting' })).toThrow();
  });

  it('its badge says "loading model" in a warning tone; its note names /health as the source, and how long', () => {
    expect(HEALTH_TEXT.loading).toBe('loading model');
    expect(HEALTH_TONE.loading).toBe('warn');
    expect(new Set(Object.values(HEALTH_TEXT)).size).toBe(4);
    expect(loadingView(loading, 13_400)).toEqual({ note: '/health: 503 Loading model', since: 'for 12 s', title: expect.stringMatching(/GET \/health answers 503 "Loading model".*figures are unknown until then/) });
    expect(loadingView({ ...loading, loadingSince: null }, 13_400)).toMatchObject({ note: '/health: 503 Loading model', since: null });
  });

  it('nothing to say for a service that serves, is down or unknown', () => {
    for (const health of ['ok', 'down', 'unknown'] as const) expect(loadingView(service('q', { health }), 0)).toBeNull();
  });
});
