import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createSignalHandler, SHUTDOWN_DEADLINE_MS, waitingLine, type PendingWork, type ShutdownSteps } from '../../../src-main/cli/shutdown.js';

// serve's signal handling: the first signal says what the console waits for and
// stops gracefully within the stated deadline; the same keypress delivered
// twice is one request; a later second signal ends at once through the
// synchronous path (database closed, children ended), exit 1.

function world(pending: PendingWork | null) {
  const said: string[] = [];
  const calls: string[] = [];
  let finish: () => void = () => {};
  let nowMs = 0;
  const steps: ShutdownSteps = {
    graceful: () => {
      calls.push('graceful');
      return new Promise<void>((r) => (finish = r));
    },
    immediate: () => calls.push('immediate'),
    pending: () => pending,
    graceMs: 5_000,
    say: (l) => said.push(l),
    exit: (code) => calls.push(`exit ${code}`),
  };
  const stopped: number[] = [];
  const handler = createSignalHandler(steps, (c) => stopped.push(c), () => nowMs);
  return {
    said,
    calls,
    stopped,
    handler,
    finish: () => finish(),
    advance: async (ms: number) => {
      nowMs += ms;
      await vi.advanceTimersByTimeAsync(ms);
    },
    setPending: (p: PendingWork | null) => (pending = p),
  };
}

const busy: PendingWork = { inFlight: 2, queued: 1, upstreams: ['l20-poc/qwen 3'], actions: ['restart of tri-gpu/embed'] };

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe('waitingLine', () => {
  it('names the requests, where they are, and the actions; null when nothing is pending or unknown', () => {
    expect(waitingLine(busy)).toBe('waiting for 2 requests in flight, 1 queued (l20-poc/qwen 3); action restart of tri-gpu/embed (cancelled, never resumed)…');
    expect(waitingLine({ inFlight: 1, queued: 0, upstreams: ['a/b 1'], actions: [] })).toBe('waiting for 1 request in flight (a/b 1)…');
    expect(waitingLine({ inFlight: 0, queued: 0, upstreams: [], actions: [] })).toBeNull();
    expect(waitingLine(null)).toBeNull();
  });
});

describe('serve signal handler', () => {
  it('says the deadline and what it waits for, repeats it each second while work is pending, and reports the stop', async () => {
    const w = world(busy);
    w.handler('SIGTERM');
    expect(w.said[0]).toMatch(/^SIGTERM: stopping; requests in flight get up to 5\.0 s, the console exits within 10 s; a second signal exits at once; waiting for 2 requests in flight/);
    await w.advance(1_000);
    expect(w.said[1]).toMatch(/^waiting for 2 requests in flight/);
    w.setPending({ inFlight: 0, queued: 0, upstreams: [], actions: [] });
    await w.advance(1_000);
    expect(w.said).toHaveLength(2);
    w.finish();
    await w.advance(500);
    expect(w.said[2]).toMatch(/^stopped in 2\.5 s$/);
    expect(w.stopped).toEqual([0]);
    expect(w.calls).toEqual(['graceful']);
  });

  it('takes the same keypress delivered twice as one request', async () => {
    const w = world(busy);
    w.handler('SIGINT');
    await w.advance(3);
    w.handler('SIGINT');
    expect(w.calls).toEqual(['graceful']);
    expect(w.said.join('\n')).not.toContain('again');
  });

  it('a second signal later ends at once through the synchronous path, saying what was not finished', async () => {
    const w = world(busy);
    w.handler('SIGTERM');
    await w.advance(1_500);
    w.handler('SIGTERM');
    expect(w.calls).toEqual(['graceful', 'immediate', 'exit 1']);
    expect(w.said[w.said.length - 1]).toBe('SIGTERM again, exiting now; not finished: 2 requests in flight, 1 queued (l20-poc/qwen 3); action restart of tri-gpu/embed (cancelled, never resumed)');
  });

  it('past the deadline it exits 1 through the synchronous path', async () => {
    const w = world(busy);
    w.handler('SIGTERM');
    await w.advance(SHUTDOWN_DEADLINE_MS - 1);
    expect(w.calls).toEqual(['graceful']);
    await w.advance(1);
    expect(w.calls).toEqual(['graceful', 'immediate', 'exit 1']);
    expect(w.said.some((l) => l.startsWith('shutdown took longer than 10 s, exiting; waiting for 2 requests'))).toBe(true);
  });
});
