import { describe, expect, it } from 'vitest';
import type { LogEntry } from '../../../../src-preload/contract/index.js';
import { FakeClock } from '../../../../src-main/core/base/index.js';
import { FollowerQueue, lineFilter } from '../../../../src-main/core/logs/index.js';

const line = (text: string): LogEntry => ({ type: 'line', ts: null, text, stream: 'stdout', failure: null, cutBytes: 0, binary: false });

describe('a follower that cannot keep up', () => {
  it('keeps at most its bound, counts what it dropped and says so in place, in order', () => {
    const q = new FollowerQueue('f1', 10, () => true, new FakeClock(0));
    for (let i = 0; i < 25; i++) q.offer(line(`l${i}`));
    expect(q.queued).toBe(10);
    const first = q.take(10);
    expect(first.map((e) => (e.type === 'line' ? e.text : e.marker))).toEqual(['l0', 'l1', 'l2', 'l3', 'l4', 'l5', 'l6', 'l7', 'l8', 'l9']);
    q.offer(line('l25'));
    const next = q.take();
    expect(next[0]).toMatchObject({ type: 'marker', marker: 'dropped', count: 15, code: 'LOGS_LINES_DROPPED' });
    expect(next[1]).toMatchObject({ text: 'l25' });
    // received + dropped = written
    expect(q.droppedTotal + first.length + 1).toBe(26);
  });

  it('says the drop right after the lines before it, even when nothing follows it', () => {
    const q = new FollowerQueue('f2', 2, () => true, new FakeClock(0));
    for (let i = 0; i < 5; i++) q.offer(line(`l${i}`));
    expect(q.take()).toEqual([expect.objectContaining({ text: 'l0' }), expect.objectContaining({ text: 'l1' }), expect.objectContaining({ marker: 'dropped', count: 3 })]);
    expect(q.take()).toEqual([]);
  });

  it('bounds the text it holds too: long lines fill it sooner, and the drop is counted the same way', () => {
    const q = new FollowerQueue('f4', 1000, () => true, new FakeClock(0), 100);
    for (let i = 0; i < 10; i++) q.offer(line('x'.repeat(30)));
    const got = q.take();
    expect(got.filter((e) => e.type === 'line')).toHaveLength(3);
    expect(got.at(-1)).toMatchObject({ marker: 'dropped', count: 7 });
    // Taken text frees its room.
    q.offer(line('y'.repeat(30)));
    expect(q.take()).toEqual([expect.objectContaining({ text: 'y'.repeat(30) })]);
  });

  it('filters lines (markers always pass)', () => {
    const q = new FollowerQueue('f3', 10, lineFilter({ pattern: 'cuda', regex: false, ignoreCase: true }), new FakeClock(0));
    q.offer(line('INFO ok'));
    q.offer(line('torch.OutOfMemoryError: CUDA out of memory'));
    q.offer({ type: 'marker', marker: 'gap', text: 'gap: 3 s', code: 'LOGS_GAP', count: 3, at: 0 });
    expect(q.take().map((e) => e.type)).toEqual(['line', 'marker']);
  });
});

describe('filters', () => {
  it('plain text, case folded by default; a regex; a bad regex is LOGS_FILTER_INVALID', () => {
    expect(lineFilter({ pattern: 'Error', regex: false, ignoreCase: true })('an ERROR here')).toBe(true);
    expect(lineFilter({ pattern: 'Error', regex: false, ignoreCase: false })('an ERROR here')).toBe(false);
    expect(lineFilter({ pattern: '^srv +load_model', regex: true, ignoreCase: true })('srv    load_model: loading')).toBe(true);
    expect(() => lineFilter({ pattern: '(unclosed', regex: true, ignoreCase: true })).toThrow(expect.objectContaining({ code: 'LOGS_FILTER_INVALID' }));
  });
});
