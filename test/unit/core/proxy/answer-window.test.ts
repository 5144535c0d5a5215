import { describe, expect, it } from 'vitest';
import { ANSWER_WINDOW_MS, AnswerWindow, isUpstreamFailure } from '../../../../src-main/core/proxy/answer-window.js';

// The 5-minute answer window behind UpstreamFigures.errors: per-second buckets
// in a ring; what is older than 5 minutes, or left from an older lap of the
// ring, is not counted.

const T0 = 1_700_000_000_000;

describe('AnswerWindow', () => {
  it('counts answers and failures of the last 5 minutes', () => {
    const w = new AnswerWindow();
    w.record(T0, false);
    w.record(T0 + 10, true);
    w.record(T0 + 60_000, true);
    expect(w.figures(T0 + 60_000)).toEqual({ windowMs: ANSWER_WINDOW_MS, answered: 3, failed: 2 });
    // The first second leaves the window 5 minutes later; the minute-old answer stays.
    expect(w.figures(T0 + 299_999)).toEqual({ windowMs: ANSWER_WINDOW_MS, answered: 3, failed: 2 });
    expect(w.figures(T0 + 300_000)).toEqual({ windowMs: ANSWER_WINDOW_MS, answered: 1, failed: 1 });
    expect(w.figures(T0 + 360_000)).toEqual({ windowMs: ANSWER_WINDOW_MS, answered: 0, failed: 0 });
  });

  it('reuses a bucket a lap later without carrying its old counts', () => {
    const w = new AnswerWindow();
    for (let i = 0; i < 50; i++) w.record(T0, true);
    // Same bucket index, 5 minutes on.
    w.record(T0 + ANSWER_WINDOW_MS, false);
    expect(w.figures(T0 + ANSWER_WINDOW_MS)).toEqual({ windowMs: ANSWER_WINDOW_MS, answered: 1, failed: 0 });
    // A bucket from 10 minutes ago never counts, even when nothing overwrote it.
    const idle = new AnswerWindow();
    idle.record(T0, true);
    expect(idle.figures(T0 + 2 * ANSWER_WINDOW_MS)).toMatchObject({ answered: 0, failed: 0 });
  });

  it('does not count answers stamped after now (a clock stepped back)', () => {
    const w = new AnswerWindow();
    w.record(T0 + 5_000, true);
    expect(w.figures(T0)).toMatchObject({ answered: 0, failed: 0 });
  });
});

describe('isUpstreamFailure', () => {
  it('is any 5xx; client errors, queue refusals and a client that left are not', () => {
    for (const s of [500, 502, 503, 504]) expect(isUpstreamFailure(s)).toBe(true);
    for (const s of [200, 400, 401, 404, 413, 429, 499]) expect(isUpstreamFailure(s)).toBe(false);
  });
  it('a planned state\'s 503 (a drain, a sleep or a restart a person approved) is not a failure of the server; a tunnel down is', () => {
    for (const code of ['upstream_draining', 'model_sleeping', 'model_waking', 'model_restarting', 'proxy_shutting_down']) expect(isUpstreamFailure(503, code), code).toBe(false);
    for (const code of ['tunnel_down', 'upstream_unreachable', 'upstream_timeout', null]) expect(isUpstreamFailure(503, code), String(code)).toBe(true);
  });
});
