import { describe, expect, it } from 'vitest';
import type { LogEntry, LogFailureKind } from '../../../../src-preload/contract/index.js';
import { AppError, Emitter, FakeClock, silentLogger } from '../../../../src-main/core/base/index.js';
import { ConfigSchema, type Config } from '../../../../src-main/core/config/index.js';
import { LogWatch, type LogFailureFound, type LogWatchRound } from '../../../../src-main/core/logs/index.js';

// The log watcher over a fake tail and hand-made poll rounds: what it asks
// (since the newest line seen), what it reports (flagged lines with their
// neighbours, each once), and when it does not read (host down, read in
// flight, backing off after a failure, watching turned off).

const INTERVAL = 30_000;
const tick = () => new Promise((r) => setImmediate(r));

interface Ask {
  label: string;
  serviceId: string;
  lines: number;
  sinceMs: number | undefined;
  answer(entries: LogEntry[]): void;
  fail(err: Error): void;
}

const line = (text: string, ts: number | null, failure: LogFailureKind | null = null): LogEntry => ({ type: 'line', ts, text, stream: 'stdout', failure, cutBytes: 0, binary: false });

function world(services: Record<string, unknown>[], extra: Record<string, unknown> = {}) {
  const config: { current: Config } = {
    current: ConfigSchema.parse({ ...extra, hosts: [{ label: 'gpu1', ssh: { host: 'gpu', user: 'ops', agent: true }, services }] }),
  };
  const clock = new FakeClock(1_000_000);
  const asks: Ask[] = [];
  const rounds = new Emitter<LogWatchRound>();
  const watch = new LogWatch({
    logs: {
      tail: (label, serviceId, o) =>
        new Promise((resolve, reject) => {
          asks.push({ label, serviceId, lines: o.lines, sinceMs: o.sinceMs, answer: (entries) => resolve({ entries }), fail: reject });
        }),
    },
    fleet: { onDidRound: (l) => rounds.on(l) },
    config,
    clock,
    logger: silentLogger,
  });
  const found: LogFailureFound[] = [];
  watch.onDidFindFailure((f) => found.push(f));
  /** One poll round with every service at `health` and the host's SSH `state`. */
  const round = (health = 'ok', state = 'connected') =>
    rounds.fire({ hosts: [{ label: 'gpu1', session: { state }, services: services.map((s) => ({ id: String(s['id']), health })) }] });
  return { watch, clock, asks, found, round, config };
}

const vllm = (p: Record<string, unknown> = {}) => ({ id: 'llm', kind: 'vllm', remotePort: 8000, model: 'm', logs: { journal: 'vllm.service' }, ...p });

describe('LogWatch', () => {
  it('reads each service once per interval from the newest line it saw, reporting each flagged line once with its neighbours', async () => {
    const w = world([vllm()]);
    const start = w.clock.now();
    w.round();
    expect(w.asks).toHaveLength(1);
    // Failures from before the watch began are not news: the first read starts when it first saw the service.
    expect(w.asks[0]).toMatchObject({ label: 'gpu1', serviceId: 'llm', lines: 300, sinceMs: start });
    w.asks[0]!.answer([line('INFO start', 2_000_000), line('INFO loading', 2_000_500)]);
    await tick();
    expect(w.found).toEqual([]);
    w.clock.advance(INTERVAL - 1);
    w.round();
    expect(w.asks).toHaveLength(1);
    w.clock.advance(1);
    w.round();
    expect(w.asks[1]!.sinceMs).toBe(2_000_500);
    const oom = [
      line('INFO loading', 2_000_500), // at the cursor, seen: left out
      line('a', 2_001_000),
      line('b', 2_001_000),
      line('c', 2_001_000),
      line('d', 2_001_000),
      line('torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB', 2_002_000, 'cuda-oom'),
      line('e', 2_003_000),
      line('f', 2_003_000),
      line('g', 2_003_000),
      line('h', 2_003_000),
    ];
    w.asks[1]!.answer(oom);
    await tick();
    expect(w.found).toHaveLength(1);
    expect(w.found[0]).toMatchObject({ host: 'gpu1', serviceId: 'llm', matched: 1, kinds: ['cuda-oom'] });
    expect(w.found[0]!.context.map((l) => l.text)).toEqual(['b', 'c', 'd', 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB', 'e', 'f', 'g']);
    expect(w.found[0]!.context[3]).toMatchObject({ failure: 'cuda-oom', ts: 2_002_000 });
    // The next read from the newest line: the same lines again (since= is inclusive) are not reported again.
    w.clock.advance(INTERVAL);
    w.round();
    expect(w.asks[2]!.sinceMs).toBe(2_003_000);
    w.asks[2]!.answer(oom.slice(6));
    await tick();
    expect(w.found).toHaveLength(1);
  });

  it('a source without timestamps is read as its last N lines: the first read only marks, then only lines after the mark count', async () => {
    const w = world([vllm({ logs: { file: '/var/log/llm.log' } })]);
    w.round();
    expect(w.asks[0]!.sinceMs).toBeUndefined();
    w.asks[0]!.answer([line('torch.OutOfMemoryError: CUDA out of memory (yesterday)', null, 'cuda-oom'), line('x', null), line('y', null)]);
    await tick();
    expect(w.found).toEqual([]);
    w.clock.advance(INTERVAL);
    w.round();
    w.asks[1]!.answer([line('x', null), line('y', null), line('z', null), line('Traceback (most recent call last):', null, 'traceback')]);
    await tick();
    expect(w.found.map((f) => [f.matched, f.kinds, f.context.map((l) => l.text)])).toEqual([[1, ['traceback'], ['x', 'y', 'z', 'Traceback (most recent call last):']]]);
  });

  it('skips a host that is not connected, never runs two reads of one service at once, and reads at once when the service\'s health changes', async () => {
    const w = world([vllm()]);
    w.round('ok', 'reconnecting');
    w.clock.advance(INTERVAL * 3);
    w.round('ok', 'reconnecting');
    expect(w.asks).toHaveLength(0);
    w.round('ok');
    expect(w.asks).toHaveLength(1);
    w.clock.advance(INTERVAL * 2);
    w.round('ok');
    expect(w.asks).toHaveLength(1); // the first is still in flight
    w.asks[0]!.answer([]);
    await tick();
    w.clock.advance(1000);
    w.round('down');
    expect(w.asks).toHaveLength(2); // down: read now, not in 29 s
    w.asks[1]!.answer([]);
    await tick();
    w.clock.advance(1000);
    w.round('down');
    expect(w.asks).toHaveLength(2); // still down is not news
    w.asks[1]!.answer([]);
    await tick();
    w.clock.advance(1000);
    w.round('loading');
    expect(w.asks).toHaveLength(3); // a restart moves it: read now
    w.asks[2]!.answer([]);
    await tick();
    w.clock.advance(1000);
    w.round('unknown');
    expect(w.asks).toHaveLength(3); // unknown (the link, not the server) is not a reason
  });

  it('backs off after a failed read (about twice the interval, then more), and reads on schedule again after a good one', async () => {
    const w = world([vllm()]);
    w.round();
    w.asks[0]!.fail(new AppError('SSH_NOT_CONNECTED', 'gone'));
    await tick();
    w.clock.advance(INTERVAL * 1.5);
    w.round();
    expect(w.asks).toHaveLength(1);
    w.clock.advance(INTERVAL);
    w.round();
    expect(w.asks).toHaveLength(2);
    w.asks[1]!.fail(new AppError('LOGS_TIMEOUT', 'slow'));
    await tick();
    w.clock.advance(INTERVAL * 2.5);
    w.round();
    expect(w.asks).toHaveLength(2); // second failure: ~4 intervals
    w.clock.advance(INTERVAL * 2.5);
    w.round();
    expect(w.asks).toHaveLength(3);
    w.asks[2]!.answer([]);
    await tick();
    w.clock.advance(INTERVAL);
    w.round();
    expect(w.asks).toHaveLength(4);
  });

  it('watches nothing for a service with logWatch: false or without a log source, nor anything when the interval is 0', () => {
    const w = world([vllm({ logWatch: false }), { id: 'bare', kind: 'vllm', remotePort: 8001, model: 'm' }]);
    w.round();
    w.clock.advance(INTERVAL * 4);
    w.round();
    expect(w.asks).toEqual([]);
    const off = world([vllm()], { alerts: { logWatchIntervalMs: 0 } });
    off.round();
    expect(off.asks).toEqual([]);
  });

  it('bounds the context: at most 40 lines, each cut to 500 characters', async () => {
    const w = world([vllm()]);
    w.round();
    const many = Array.from({ length: 100 }, (_, i) => line(`${'x'.repeat(2000)} CUDA out of memory ${i}`, 2_000_000 + i, 'cuda-oom'));
    w.asks[0]!.answer(many);
    await tick();
    expect(w.found[0]!.matched).toBe(100);
    expect(w.found[0]!.context).toHaveLength(40);
    expect(Math.max(...w.found[0]!.context.map((l) => l.text.length))).toBe(501);
  });
});
