import { describe, expect, it } from 'vitest';
import {
  LogsErrorCode,
  type ChannelInput,
  type ChannelOutput,
  type EventChannel,
  type EventPayload,
  type InvokeChannel,
  type LogEntry,
} from '../../../../src-preload/contract/index.js';
import { downloadText, entryLine, visibleRows } from '../../../../src-renderer/src/features/logs/logs-format.js';
import { appendBounded, createLogsStore, MAX_LOG_ENTRIES } from '../../../../src-renderer/src/features/logs/logs-store.js';
import { TransportError, type ConnectionState, type Transport } from '../../../../src-renderer/src/transport/transport.js';

// The renderer's logs panel state (issue #29 item 1): a bounded list with
// markers in place, filter errors by code, and a follow that renews its lease
// every leaseMs/2 and is unfollowed when the panel goes.

const SOURCE = { kind: 'journal' as const, description: 'journal of vllm-gemma.service', timestamps: true };
const line = (n: number, ts: number | null = 1_700_000_000_000 + n): LogEntry => ({ type: 'line', ts, text: `line ${n}`, stream: 'stdout', failure: null, cutBytes: 0, binary: false });

class FakeTransport implements Transport {
  readonly kind = 'web' as const;
  readonly calls: { channel: string; input: unknown }[] = [];
  readonly listeners = new Map<string, Set<(p: unknown) => void>>();
  /** Answers by channel; a function may throw (a coded error). */
  answers: Partial<Record<InvokeChannel, (input: unknown) => unknown>> = {
    'logs.tail': () => ({ source: SOURCE, entries: [line(1), line(2)], scanned: 2 }),
    'logs.follow': () => ({ followId: 'f1', source: SOURCE, leaseMs: 30_000 }),
    'logs.renew': (i) => ({ renewed: (i as { followIds: string[] }).followIds, unknown: [] }),
    'logs.unfollow': (i) => ({ followId: (i as { followId: string }).followId, ended: true }),
  };
  invoke<C extends InvokeChannel>(channel: C, input: ChannelInput<C>): Promise<ChannelOutput<C>> {
    this.calls.push({ channel, input });
    const answer = this.answers[channel];
    if (!answer) return Promise.reject(new Error(`unexpected ${channel}`));
    try {
      return Promise.resolve(answer(input) as ChannelOutput<C>);
    } catch (err) {
      return Promise.reject(err);
    }
  }
  on<E extends EventChannel>(event: E, listener: (payload: EventPayload<E>) => void): () => void {
    const set = this.listeners.get(event) ?? new Set();
    set.add(listener as (p: unknown) => void);
    this.listeners.set(event, set);
    return () => set.delete(listener as (p: unknown) => void);
  }
  emit<E extends EventChannel>(event: E, payload: EventPayload<E>): void {
    for (const l of this.listeners.get(event) ?? []) l(payload);
  }
  onConnection(listener: (s: ConnectionState) => void): () => void {
    listener({ status: 'open', attempt: 0, nextRetryAt: null, lastError: null });
    return () => undefined;
  }
  dispose(): void {}
  called(channel: string) {
    return this.calls.filter((c) => c.channel === channel);
  }
}

function fakeTimers() {
  const timers = new Map<number, { fn: () => void; ms: number }>();
  let next = 1;
  return {
    timers,
    setInterval: (fn: () => void, ms: number) => {
      timers.set(next, { fn, ms });
      return next++;
    },
    clearInterval: (h: unknown) => void timers.delete(h as number),
    fire: () => [...timers.values()].forEach((t) => t.fn()),
  };
}

const flush = () => new Promise((r) => setTimeout(r, 0));
const target = { label: 'tri-gpu', serviceId: 'gemma' };

describe('logs store', () => {
  it('keeps the last MAX_LOG_ENTRIES entries of a follow and counts what fell off', async () => {
    const t = new FakeTransport();
    const store = createLogsStore({ transport: t });
    store.getState().setFollow(true);
    store.getState().setTarget(target);
    await flush();
    expect(store.getState()).toMatchObject({ followId: 'f1', status: 'following' });
    let n = 0;
    for (let b = 0; b < 6; b++) t.emit('logs.batch', { followId: 'f1', entries: Array.from({ length: 1000 }, () => line(n++)), queued: 0, firstIndex: b * 1000 });
    const s = store.getState();
    expect(s.entries).toHaveLength(MAX_LOG_ENTRIES);
    expect(s.evicted).toBe(1000);
    expect(s.entries[0]).toEqual(line(1000));
    expect(s.entries.at(-1)).toEqual(line(5999));
    // Another follow's batches are not ours.
    t.emit('logs.batch', { followId: 'other', entries: [line(9)], queued: 0, firstIndex: 0 });
    expect(store.getState().entries.at(-1)).toEqual(line(5999));
    expect(appendBounded([line(1)], [line(2), line(3)], 2)).toEqual({ entries: [line(2), line(3)], dropped: 1 });
  });

  it('keeps markers in place between lines, with their code and count', async () => {
    const t = new FakeTransport();
    const store = createLogsStore({ transport: t });
    store.getState().setFollow(true);
    store.getState().setTarget(target);
    await flush();
    const dropped: LogEntry = { type: 'marker', marker: 'dropped', text: '120 lines dropped: the view could not keep up', code: 'LOGS_LINES_DROPPED', count: 120, at: 5 };
    const lost: LogEntry = { type: 'marker', marker: 'link-lost', text: 'the SSH link went; waiting for it', code: 'LOGS_LINK_LOST', count: null, at: 6 };
    t.emit('logs.batch', { followId: 'f1', entries: [line(1), dropped, line(2), lost], queued: 7, firstIndex: 0 });
    expect(store.getState().entries).toEqual([line(1), dropped, line(2), lost]);
    expect(store.getState().behind).toBe(7);
    expect(store.getState()).toMatchObject({ received: 2, droppedCounted: 120 });
    expect(entryLine(dropped)).toBe('-- ⚠ 120 lines dropped: the view could not keep up (LOGS_LINES_DROPPED) --');
  });

  it('says the entries the event stream skipped with their exact count, drops a repeat, and counts a loss before the end', async () => {
    const t = new FakeTransport();
    const store = createLogsStore({ transport: t, now: () => 42 });
    store.getState().setFollow(true);
    store.getState().setTarget(target);
    await flush();
    t.emit('logs.batch', { followId: 'f1', entries: [line(0), line(1)], queued: 0, firstIndex: 0 });
    // 2..38 never arrived.
    t.emit('logs.batch', { followId: 'f1', entries: [line(39)], queued: 0, firstIndex: 39 });
    // A repeat of 39 with one new entry.
    t.emit('logs.batch', { followId: 'f1', entries: [line(39), line(40)], queued: 0, firstIndex: 39 });
    const lost: LogEntry = { type: 'marker', marker: 'stream-lost', text: '37 lines lost: the event stream was backed up', code: LogsErrorCode.STREAM_BACKED_UP, count: 37, at: 42 };
    expect(store.getState().entries).toEqual([line(0), line(1), lost, line(39), line(40)]);
    expect(store.getState()).toMatchObject({ received: 4, droppedCounted: 37 });
    expect(entryLine(lost)).toBe('-- ⚠ 37 lines lost: the event stream was backed up (LOGS_STREAM_BACKED_UP) --');
    t.emit('logs.ended', { followId: 'f1', error: null, endIndex: 44 });
    expect(store.getState().entries.at(-1)).toMatchObject({ marker: 'stream-lost', count: 3, text: '3 lines lost: the event stream was backed up' });
    expect(store.getState()).toMatchObject({ status: 'ended', droppedCounted: 40 });
    // A new follow counts from 0 again.
    store.getState().setFollow(true);
    await flush();
    t.emit('logs.batch', { followId: 'f1', entries: [line(0)], queued: 0, firstIndex: 0 });
    expect(store.getState().entries).toEqual([line(0)]);
    store.getState().dispose();
  });

  it('sends the filter it holds, shows LOGS_FILTER_INVALID by the filter and other codes as the error', async () => {
    const t = new FakeTransport();
    const store = createLogsStore({ transport: t });
    store.getState().setTarget(target);
    await flush();
    expect(store.getState().entries).toHaveLength(2);
    store.getState().setFilter({ text: 'out of (memory', regex: true });
    t.answers['logs.tail'] = () => {
      throw new TransportError({ code: LogsErrorCode.FILTER_INVALID, message: 'the filter is not a valid regular expression: Unterminated group', retryable: false, details: {} });
    };
    await store.getState().load();
    expect(t.called('logs.tail').at(-1)!.input).toMatchObject({ ...target, lines: 200, filter: { pattern: 'out of (memory', regex: true, ignoreCase: true } });
    expect(store.getState()).toMatchObject({ status: 'error', error: null, filterError: { code: 'LOGS_FILTER_INVALID' } });
    t.answers['logs.tail'] = () => {
      throw new TransportError({ code: LogsErrorCode.NOT_PERMITTED, message: 'journal of x: ops may not read the system journal; add the user to the systemd-journal group', retryable: false, details: {} });
    };
    store.getState().setFilter({ text: '', regex: false });
    await store.getState().load();
    expect(t.called('logs.tail').at(-1)!.input).not.toHaveProperty('filter');
    expect(store.getState()).toMatchObject({ status: 'error', filterError: null, error: { code: 'LOGS_NOT_PERMITTED' } });
    expect(store.getState().entries).toEqual([]);
  });

  it('renews the follow every leaseMs/2, says so when main no longer knows it, and unfollows on dispose', async () => {
    const t = new FakeTransport();
    const timers = fakeTimers();
    const store = createLogsStore({ transport: t, setInterval: timers.setInterval, clearInterval: timers.clearInterval });
    store.getState().setFollow(true);
    store.getState().setTarget(target);
    await flush();
    expect([...timers.timers.values()].map((x) => x.ms)).toEqual([15_000]);
    timers.fire();
    await flush();
    expect(t.called('logs.renew').map((c) => c.input)).toEqual([{ followIds: ['f1'] }]);
    // Switching the service unfollows the old follow and starts another.
    t.answers['logs.follow'] = () => ({ followId: 'f2', source: SOURCE, leaseMs: 8_000 });
    store.getState().setTarget({ label: 'strix', serviceId: 'coder' });
    await flush();
    expect(t.called('logs.unfollow').map((c) => c.input)).toEqual([{ followId: 'f1' }]);
    expect([...timers.timers.values()].map((x) => x.ms)).toEqual([4_000]);
    t.answers['logs.renew'] = () => ({ renewed: [], unknown: ['f2'] });
    timers.fire();
    await flush();
    expect(store.getState()).toMatchObject({ status: 'ended', followId: null, error: { code: 'LOGS_FOLLOW_UNKNOWN' } });
    expect(timers.timers.size).toBe(0);

    t.answers['logs.follow'] = () => ({ followId: 'f3', source: SOURCE, leaseMs: 8_000 });
    await store.getState().load();
    expect(store.getState().followId).toBe('f3');
    store.getState().dispose();
    expect(t.called('logs.unfollow').map((c) => c.input)).toEqual([{ followId: 'f1' }, { followId: 'f3' }]);
    expect(timers.timers.size).toBe(0);
    expect([...t.listeners.values()].every((s) => s.size === 0)).toBe(true);
  });

  it('keeps batches that arrive before the follow call answers, and ends on logs.ended with its error', async () => {
    const t = new FakeTransport();
    let answer!: (v: unknown) => void;
    t.answers['logs.follow'] = () => new Promise((r) => (answer = r));
    const store = createLogsStore({ transport: t });
    store.getState().setFollow(true);
    store.getState().setTarget(target);
    await flush();
    t.emit('logs.batch', { followId: 'f9', entries: [line(1)], queued: 0, firstIndex: 0 });
    answer({ followId: 'f9', source: SOURCE, leaseMs: 30_000 });
    await flush();
    await flush();
    expect(store.getState().entries).toEqual([line(1)]);
    t.emit('logs.ended', { followId: 'f9', error: { code: LogsErrorCode.NOT_PERMITTED, message: 'docker: add the user to the docker group', retryable: false, details: {} }, endIndex: 1 });
    expect(store.getState()).toMatchObject({ status: 'error', followId: null, error: { code: 'LOGS_NOT_PERMITTED' } });
    store.getState().dispose();
  });

  it('asks again once the host is connected after a tail failed on the link; never for a source problem, never while the host is away', async () => {
    const t = new FakeTransport();
    let linkUp = false;
    t.answers['logs.tail'] = () => {
      if (!linkUp) throw new TransportError({ code: 'SSH_NOT_CONNECTED', message: 'strix: SSH is reconnecting', retryable: true, details: {} });
      return { source: SOURCE, entries: [line(1)], scanned: 1 };
    };
    const store = createLogsStore({ transport: t });
    store.getState().hostStateChanged('reconnecting');
    store.getState().setTarget(target);
    await flush();
    expect(store.getState()).toMatchObject({ status: 'error', error: { code: 'SSH_NOT_CONNECTED' } });
    store.getState().hostStateChanged('connecting');
    await flush();
    expect(t.called('logs.tail')).toHaveLength(1);
    linkUp = true;
    store.getState().hostStateChanged('connected');
    await flush();
    expect(t.called('logs.tail')).toHaveLength(2);
    expect(store.getState()).toMatchObject({ status: 'ready', error: null, entries: [line(1)] });
    // A source the user may not read fails the same way after a reconnect: not asked again.
    t.answers['logs.tail'] = () => {
      throw new TransportError({ code: LogsErrorCode.NOT_PERMITTED, message: 'add the user to the systemd-journal group', retryable: false, details: {} });
    };
    await store.getState().load();
    store.getState().hostStateChanged('disconnected');
    store.getState().hostStateChanged('connected');
    await flush();
    expect(t.called('logs.tail')).toHaveLength(3);
    store.getState().dispose();
  });

  it('downloads lines with the source\'s own time (never the arrival time), none when the line has none; draws only the rows in view', () => {
    const ts = Date.UTC(2026, 11, 5, 8, 14, 2);
    const text = downloadText([line(1, ts), line(2, null)]);
    expect(text.split('\n')[0]).toMatch(/^2026-12-0\dT\d\d:14:02[+-]\d\d:\d\d line 1$/);
    expect(text.split('\n')[1]).toBe('line 2');
    expect(visibleRows(0, 400, 20, 5000, 0)).toEqual({ first: 0, last: 20 });
    expect(visibleRows(20 * 4000, 400, 20, 5000, 10)).toEqual({ first: 3990, last: 4030 });
    expect(visibleRows(0, 400, 20, 0)).toEqual({ first: 0, last: -1 });
  });
});
