import { describe, expect, it } from 'vitest';
import { RollingCost } from '../../../../src-main/core/cost/index.js';

const PRICE = 2.641736;

describe('live cost per 1M output tokens from telemetry', () => {
  it('usage-based over busy ticks matches the field-notes figure; reservation-based counts idle time too', () => {
    const r = new RollingCost(60_000);
    r.push(0, PRICE, [{ id: 'a', genTokPerS: 0, running: 0 }]);
    let f = r.push(1_000, PRICE, [{ id: 'a', genTokPerS: 72.47, running: 1 }]);
    for (let t = 2_000; t <= 10_000; t += 1_000) f = r.push(t, PRICE, [{ id: 'a', genTokPerS: 72.47, running: 1 }]);
    expect(f.usageBasedUsdPerMTok).toBeCloseTo(10.1257, 3);
    // ten more idle seconds: busy-time cost unchanged, reservation-based doubles
    for (let t = 11_000; t <= 20_000; t += 1_000) f = r.push(t, PRICE, [{ id: 'a', genTokPerS: 0, running: 0 }]);
    expect(f.usageBasedUsdPerMTok).toBeCloseTo(10.1257, 3);
    expect(f.reservationBasedUsdPerMTok).toBeCloseTo(20.2514, 3);
    expect(f.perService.get('a')).toBeCloseTo(10.1257, 3);
  });

  it('two services busy at once share the host time, so neither is charged the whole host', () => {
    const r = new RollingCost(60_000);
    r.push(0, PRICE, []);
    const both = [
      { id: 'a', genTokPerS: 72.47, running: 1 },
      { id: 'b', genTokPerS: 72.47, running: 1 },
    ];
    let f = r.push(1_000, PRICE, both);
    for (let t = 2_000; t <= 5_000; t += 1_000) f = r.push(t, PRICE, both);
    expect(f.perService.get('a')).toBeCloseTo(10.1257 / 2, 3);
    expect(f.usageBasedUsdPerMTok).toBeCloseTo(10.1257 / 2, 3);
  });

  it('unavailable (null), never 0, without tokens or without a price; old ticks leave the window', () => {
    const r = new RollingCost(10_000);
    r.push(0, PRICE, [{ id: 'a', genTokPerS: null, running: null }]);
    expect(r.push(1_000, PRICE, [{ id: 'a', genTokPerS: 0, running: 0 }]).usageBasedUsdPerMTok).toBeNull();
    expect(r.push(2_000, null, [{ id: 'a', genTokPerS: 50, running: 1 }]).usageBasedUsdPerMTok).toBeNull();
    expect(r.push(3_000, PRICE, [{ id: 'a', genTokPerS: 50, running: 1 }]).usageBasedUsdPerMTok).not.toBeNull();
    const later = r.push(20_000, PRICE, [{ id: 'a', genTokPerS: 0, running: 0 }]);
    expect(later.usageBasedUsdPerMTok).toBeNull();
    expect(later.perService.get('a')).toBeNull();
  });
});
