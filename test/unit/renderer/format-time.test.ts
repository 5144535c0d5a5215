import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatDuration, formatTime, formatTimestamp, isoLocal, zoneLabel } from '../../../src-renderer/src/format/format.js';
import { windowText } from '../../../src-renderer/src/features/reports/report-format.js';

// One time format in the UI: local 24-hour clock with the zone, the date when
// not today; ISO 8601 with the offset for machine-readable attributes. Node
// reads TZ at each Date call, so the zone is set here for the whole file.

const saved = process.env.TZ;
beforeAll(() => {
  process.env.TZ = 'Europe/Berlin';
});
afterAll(() => {
  process.env.TZ = saved;
});

// 2026-12-02 14:03:07 in Berlin (UTC+1 in winter) = 13:03:07Z.
const WINTER = Date.UTC(2026, 11, 2, 13, 3, 7);
const SUMMER = Date.UTC(2026, 6, 3, 6, 4, 5); // 08:04:05 CEST (UTC+2)

describe('time format', () => {
  it('names the zone, DST included, and odd offsets', () => {
    expect(zoneLabel(WINTER)).toBe('UTC+1');
    expect(zoneLabel(SUMMER)).toBe('UTC+2');
    process.env.TZ = 'UTC';
    expect(zoneLabel(WINTER)).toBe('UTC');
    process.env.TZ = 'Asia/Kolkata';
    expect(zoneLabel(WINTER)).toBe('UTC+5:30');
    process.env.TZ = 'America/Los_Angeles';
    expect(zoneLabel(WINTER)).toBe('UTC−8');
    process.env.TZ = 'Europe/Berlin';
  });

  it('shows a 24-hour clock with the zone today, and the date on other days or always for logs', () => {
    expect(formatTime(WINTER, { nowMs: WINTER + 3_600_000 })).toBe('14:03:07 UTC+1');
    expect(formatTime(WINTER, { nowMs: WINTER + 86_400_000 })).toBe('2026-12-02 14:03:07 UTC+1');
    expect(formatTime(SUMMER, { nowMs: SUMMER, date: 'always' })).toBe('2026-07-03 08:04:05 UTC+2');
    expect(formatTimestamp(WINTER)).toBe('2026-12-02 14:03:07 UTC+1');
    expect(formatTime(null)).toBe('—');
    expect(formatTime(Number.NaN)).toBe('—');
  });

  it('gives ISO 8601 with the local offset', () => {
    expect(isoLocal(WINTER)).toBe('2026-12-02T14:03:07+01:00');
    expect(isoLocal(SUMMER)).toBe('2026-07-03T08:04:05+02:00');
    expect(new Date(isoLocal(WINTER)).getTime()).toBe(WINTER);
  });

  it('humanises durations', () => {
    expect(formatDuration(850)).toBe('850 ms');
    expect(formatDuration(12_000)).toBe('12 s');
    expect(formatDuration(200_000)).toBe('3 min 20 s');
    expect(formatDuration(180_000)).toBe('3 min');
    expect(formatDuration(7_500_000)).toBe('2 h 5 min');
    expect(formatDuration(3 * 86_400_000 + 4 * 3_600_000)).toBe('3 d 4 h');
    expect(formatDuration(-1)).toBe('—');
  });

  it('writes a report window with one zone, the date once when both ends share it', () => {
    expect(windowText(WINTER, WINTER + 2 * 3_600_000)).toBe('2026-12-02 14:03:07 – 16:03:07 UTC+1');
    expect(windowText(WINTER, WINTER + 86_400_000)).toBe('2026-12-02 14:03:07 – 2026-12-03 14:03:07 UTC+1');
  });
});
