import { describe, expect, it } from 'vitest';
import type { Exchange } from '../../../../src-main/core/proxy/exchange.js';
import { STALLED_MAX, inFlightView } from '../../../../src-main/core/proxy/in-flight.js';
import { LiveList } from '../../../../src-main/core/proxy/live-list.js';
import type { TrafficClass } from '../../../../src-main/core/proxy/classes.js';

// The requests in flight on one upstream as the hanging rule reads them:
// longest silence first, at most 20; per class the longest silence, the
// longest age and the age of the most silent one (for /metrics).

function running(list: Array<{ cls: TrafficClass | null; sentAt: number; lastByteAt: number }>): LiveList<Exchange> {
  const live = new LiveList<Exchange>();
  for (const e of list) live.add(e as unknown as Exchange);
  return live;
}

describe('inFlightView', () => {
  it('is empty with nothing running (or no list yet)', () => {
    expect(inFlightView(undefined, 1000)).toEqual({ stalled: [], byClass: {} });
    expect(inFlightView(new LiveList(), 1000)).toEqual({ stalled: [], byClass: {} });
  });

  it('measures silence from the last byte, or from the send before the first; age from the send', () => {
    const view = inFlightView(
      running([
        { cls: 'interactive', sentAt: 1_000, lastByteAt: 9_000 },
        { cls: 'interactive', sentAt: 5_000, lastByteAt: -1 },
        { cls: 'batch', sentAt: 0, lastByteAt: 9_900 },
      ]),
      10_000,
    );
    expect(view.stalled).toEqual([
      { class: 'interactive', inFlightMs: 5_000, sinceByteMs: 5_000 },
      { class: 'interactive', inFlightMs: 9_000, sinceByteMs: 1_000 },
      { class: 'batch', inFlightMs: 10_000, sinceByteMs: 100 },
    ]);
    // The oldest interactive request is not the most silent one: the hanging rule checks both on one request.
    expect(view.byClass.interactive).toEqual({ longestSilenceMs: 5_000, longestInFlightMs: 9_000, silentInFlightMs: 5_000 });
    expect(view.byClass.batch).toEqual({ longestSilenceMs: 100, longestInFlightMs: 10_000, silentInFlightMs: 10_000 });
    expect(view.byClass.system).toBeUndefined();
  });

  it('skips a request not sent yet (still resolving its upstream) and lists at most 20', () => {
    const many = Array.from({ length: 30 }, (_, i) => ({ cls: 'batch' as const, sentAt: 0, lastByteAt: i * 100 }));
    const view = inFlightView(running([...many, { cls: 'batch', sentAt: -1, lastByteAt: -1 }]), 10_000);
    expect(view.stalled).toHaveLength(STALLED_MAX);
    expect(view.stalled[0]!.sinceByteMs).toBe(10_000);
    expect(view.stalled.at(-1)!.sinceByteMs).toBe(10_000 - 19 * 100);
    // The per-class figures see all 30, not only the 20 listed.
    expect(view.byClass.batch).toEqual({ longestSilenceMs: 10_000, longestInFlightMs: 10_000, silentInFlightMs: 10_000 });
  });
});
