import { describe, expect, it } from 'vitest';
import {
  DASH,
  dataValue,
  displayUrl,
  formatAgo,
  formatCount,
  formatGiB,
  formatMemory,
  formatPct,
  formatPower,
  formatTemp,
  formatTokPerS,
  formatUntil,
  formatUsdPerHour,
  ratioPct,
  shortHash,
} from '../../../src-renderer/src/format/format.js';

describe('format helpers', () => {
  it('GiB with one decimal from MiB', () => {
    expect(formatGiB(46068)).toBe('45.0');
    expect(formatGiB(41726)).toBe('40.7');
    expect(formatGiB(0)).toBe('0.0');
    expect(formatMemory(41726, 46068)).toBe('40.7 / 45.0 GiB');
    expect(formatMemory(null, 81559)).toBe(`${DASH} / 79.6 GiB`);
  });

  it('percent', () => {
    expect(formatPct(87.4)).toBe('87%');
    expect(formatPct(0)).toBe('0%');
    expect(formatPct(37.25, 1)).toBe('37.3%');
    expect(ratioPct(23034, 46068)).toBe(50);
    expect(ratioPct(10, 0)).toBeNull();
    expect(ratioPct(null, 46068)).toBeNull();
  });

  it('tokens per second', () => {
    expect(formatTokPerS(4.24)).toBe('4.2');
    expect(formatTokPerS(0)).toBe('0.0');
    expect(formatTokPerS(412.6)).toBe('413');
    expect(formatTokPerS(3210)).toBe('3.2k');
  });

  it('power, temperature, counts, price', () => {
    expect(formatPower(231.4, 275)).toBe('231 / 275 W');
    expect(formatPower(231.4, null)).toBe('231 W');
    expect(formatTemp(64.2)).toBe('64 °C');
    expect(formatCount(3)).toBe('3');
    expect(formatCount(0)).toBe('0');
    expect(formatUsdPerHour(0.89)).toBe('$0.89/h');
  });

  it('shows "—" for unknown, never 0', () => {
    for (const f of [formatGiB, formatMemory, formatPct, formatTokPerS, formatPower, formatTemp, formatCount, formatUsdPerHour]) {
      expect(f(null), f.name).toBe(DASH);
      expect(f(undefined), f.name).toBe(DASH);
      expect(f(Number.NaN), f.name).toBe(DASH);
    }
    expect(formatUntil(null, 0)).toBe(DASH);
    expect(formatAgo(null, 0)).toBe(DASH);
    expect(shortHash(null)).toBe(DASH);
    expect(displayUrl(null)).toBe(DASH);
  });

  it('data-value is the raw number or empty', () => {
    expect(dataValue(61.3)).toBe('61.3');
    expect(dataValue(0)).toBe('0');
    expect(dataValue(null)).toBe('');
    expect(dataValue(Number.POSITIVE_INFINITY)).toBe('');
  });

  it('relative times', () => {
    expect(formatUntil(10_000 + 4_200, 10_000)).toBe('in 4 s');
    expect(formatUntil(10_000 + 125_000, 10_000)).toBe('in 2 min');
    expect(formatUntil(9_000, 10_000)).toBe('now');
    expect(formatAgo(10_000 - 14_000, 10_000)).toBe('14 s ago');
  });

  it('urls and hashes', () => {
    expect(displayUrl('http://127.0.0.1:18001/v1')).toBe('127.0.0.1:18001/v1');
    expect(shortHash('abcdef0123456789ff')).toBe('abcdef012345');
  });
});
