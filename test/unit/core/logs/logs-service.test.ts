import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LogsBatchSchema, LogsEndedSchema, LogsTailResultSchema, type LogEntry } from '../../../../src-preload/contract/index.js';
import { AppError, FakeClock } from '../../../../src-main/core/base/index.js';
import { ConfigSchema, type HostConfig } from '../../../../src-main/core/config/index.js';
import { LogFollowEvents, LogsService, type LogFollow } from '../../../../src-main/core/logs/index.js';
import { SshErrorCode } from '../../../../src-main/core/ssh/index.js';
import { ExecChunkQueue } from '../../../../src-main/core/ssh/exec-stream.js';

// The service over a fake host whose streams the test writes into: sharing,
// bounds, resume after a lost link (cursor, timestamp, gap), and the errors a
// source gives. The same paths run against a real sshd in test/integration/logs.

const tick = () => new Promise((r) => setImmediate(r));

function world(logs: Record<string, unknown>, options: Partial<ConstructorParameters<typeof LogsService>[0]> = {}) {
  const host: HostConfig = ConfigSchema.parse({
    hosts: [{ label: 'gpu1', ssh: { host: 'gpu', user: 'ops', agent: true }, services: [{ id: 'llm', kind: 'vllm', remotePort: 8000, model: 'm', logs }] }],
  }).hosts[0]!;
  const clock = new FakeClock(1_000_000);
  const opened: { command: string; stream: ExecChunkQueue }[] = [];
  let connected = true;
  const service = new LogsService({
    clock,
    hosts: {
      hostConfig: (label) => {
        if (label !== 'gpu1') throw new AppError(SshErrorCode.NOT_CONNECTED, 'no such host');
        return host;
      },
      execStream: (_label, command, opts) => {
        if (!connected) throw new AppError(SshErrorCode.NOT_CONNECTED, 'gpu1: SSH is reconnecting', { retryable: true });
        const stream = new ExecChunkQueue(opts);
        opened.push({ command, stream });
        return stream;
      },
    },
    secretsOf: () => ['sk-service-key-1'],
    ...options,
  });
  return { service, clock, opened, setConnected: (c: boolean) => (connected = c) };
}

const textsOf = (entries: LogEntry[]) => entries.map((e) => (e.type === 'line' ? e.text : `<${e.marker}>`));
const journalLine = (cursor: string, msg: string, us = 1_796_433_124_070_014) => JSON.stringify({ __CURSOR: cursor, __REALTIME_TIMESTAMP: String(us), MESSAGE: msg }) + '\n';

describe('follows are shared per service', () => {
  it('ten followers share one channel; each gets every line; the channel closes when the last leaves', async () => {
    const w = world({ journal: 'vllm.service' });
    const follows: LogFollow[] = [];
    for (let i = 0; i < 10; i++) follows.push(await w.service.follow('gpu1', 'llm', { lines: 50 }));
    expect(w.opened).toHaveLength(1);
    expect(w.service.channelCount).toBe(1);
    w.opened[0]!.stream.push('stdout', Buffer.from(journalLine('c1', 'hello') + journalLine('c2', 'torch.OutOfMemoryError: CUDA out of memory. key sk-service-key-1')));
    await tick();
    for (const f of follows) {
      const got = f.queue.take();
      expect(textsOf(got)).toEqual(['hello', 'torch.OutOfMemoryError: CUDA out of memory. key [redacted]']);
      expect(got[1]).toMatchObject({ failure: 'cuda-oom', ts: 1_796_433_124_070 });
    }
    for (const f of follows.slice(0, 9)) f.dispose();
    expect(w.opened[0]!.stream.ended).toBe(false);
    follows[9]!.dispose();
    expect(w.opened[0]!.stream.ended).toBe(true);
    expect(w.service.channelCount).toBe(0);
  });

  it('a follower who joins later gets the last lines it asks for from the shared backlog', async () => {
    const w = world({ journal: 'vllm.service' });
    const a = await w.service.follow('gpu1', 'llm', { lines: 100 });
    w.opened[0]!.stream.push('stdout', Buffer.from(['1', '2', '3', '4'].map((n) => journalLine(`c${n}`, `line ${n}`)).join('')));
    await tick();
    const b = await w.service.follow('gpu1', 'llm', { lines: 2 });
    expect(textsOf(b.queue.take())).toEqual(['line 3', 'line 4']);
    expect(a.queue.queued).toBe(4);
    expect(w.opened).toHaveLength(1);
  });

  it('bounds followers per service and in all (LOGS_TOO_MANY_FOLLOWERS)', async () => {
    const w = world({ journal: 'vllm.service' }, { maxFollowersPerService: 3 });
    for (let i = 0; i < 3; i++) await w.service.follow('gpu1', 'llm', { lines: 0 });
    await expect(w.service.follow('gpu1', 'llm', { lines: 0 })).rejects.toMatchObject({ code: 'LOGS_TOO_MANY_FOLLOWERS' });
  });

  it('a bad regex fails the call before any channel opens', async () => {
    const w = world({ journal: 'vllm.service' });
    await expect(w.service.follow('gpu1', 'llm', { lines: 0, filter: { pattern: '[', regex: true, ignoreCase: true } })).rejects.toMatchObject({ code: 'LOGS_FILTER_INVALID' });
    expect(w.opened).toHaveLength(0);
  });
});

describe('a follow through a lost link', () => {
  it('journal: waits for the link, then resumes after the last cursor (said, nothing repeated)', async () => {
    const w = world({ journal: 'vllm.service' });
    const f = await w.service.follow('gpu1', 'llm', { lines: 10 });
    w.opened[0]!.stream.push('stdout', Buffer.from(journalLine('s=a;i=1', 'one') + journalLine('s=a;i=2', 'two')));
    await tick();
    w.setConnected(false);
    w.opened[0]!.stream.fail(new AppError(SshErrorCode.DISCONNECTED, 'lost', { retryable: true }));
    await tick();
    w.clock.advance(1_000);
    await tick();
    expect(w.opened).toHaveLength(1); // still down: nothing opened, tried again later
    w.setConnected(true);
    w.clock.advance(10_000);
    await tick();
    expect(w.opened).toHaveLength(2);
    expect(w.opened[1]!.command).toContain("'--after-cursor=s=a;i=2'");
    expect(w.opened[1]!.command).not.toContain('--lines=10');
    w.opened[1]!.stream.push('stdout', Buffer.from(journalLine('s=a;i=3', 'three')));
    await tick();
    expect(textsOf(f.queue.take())).toEqual(['one', 'two', '<link-lost>', '<resumed>', 'three']);
  });

  it("docker: resumes from the last line's timestamp and drops the lines of that instant it already showed", async () => {
    const w = world({ docker: 'vllm' });
    const f = await w.service.follow('gpu1', 'llm', { lines: 10 });
    w.opened[0]!.stream.push('stdout', Buffer.from('2026-12-05T01:00:00.000000001Z a\n2026-12-05T01:00:01.000000001Z b\n2026-12-05T01:00:01.000000001Z c\n'));
    await tick();
    w.opened[0]!.stream.fail(new AppError(SshErrorCode.DISCONNECTED, 'lost', { retryable: true }));
    await tick();
    w.clock.advance(10_000);
    await tick();
    expect(w.opened[1]!.command).toContain('--since=2026-12-05T01:00:01.000000001Z');
    w.opened[1]!.stream.push('stdout', Buffer.from('2026-12-05T01:00:01.000000001Z b\n2026-12-05T01:00:01.000000001Z c\n2026-12-05T01:00:02.5Z d\n'));
    await tick();
    expect(textsOf(f.queue.take())).toEqual(['a', 'b', 'c', '<link-lost>', '<resumed>', 'd']);
  });

  it('file: cannot resume, so it says how many seconds may be missing (LOGS_GAP)', async () => {
    const w = world({ file: '/var/log/vllm.log' });
    const f = await w.service.follow('gpu1', 'llm', { lines: 10 });
    w.opened[0]!.stream.push('stdout', Buffer.from('x\n'));
    await tick();
    w.setConnected(false);
    w.opened[0]!.stream.fail(new AppError(SshErrorCode.DISCONNECTED, 'lost', { retryable: true }));
    await tick();
    for (let i = 0; i < 4; i++) {
      w.clock.advance(5_000);
      await tick();
    }
    w.setConnected(true);
    w.clock.advance(5_000);
    await tick();
    expect(w.opened[1]!.command).toBe("tail --lines=0 -F -- /var/log/vllm.log");
    const gap = f.queue.take().find((e) => e.type === 'marker' && e.marker === 'gap');
    expect(gap).toMatchObject({ code: 'LOGS_GAP', count: 25 });
  });

  it('a journal the user may not read ends every follower with LOGS_NOT_PERMITTED and closes the channel', async () => {
    const w = world({ journal: 'vllm.service' });
    const f = await w.service.follow('gpu1', 'llm', { lines: 10 });
    const ended = new Promise<AppError | null>((r) => f.queue.onDidEnd(r));
    w.opened[0]!.stream.push('stderr', Buffer.from('Hint: You are currently not seeing messages from other users and the system.\n'));
    expect(await ended).toMatchObject({ code: 'LOGS_NOT_PERMITTED' });
    expect(w.opened[0]!.stream.ended).toBe(true);
    expect(w.service.channelCount).toBe(0);
  });
});

describe('tail', () => {
  it('the last N lines, masked and classified, through the filter', async () => {
    const w = world({ compose: { service: 'vllm' } });
    const p = w.service.tail('gpu1', 'llm', { lines: 2, filter: { pattern: 'error|warn', regex: true, ignoreCase: true } });
    await tick();
    const s = w.opened[0]!.stream;
    expect(w.opened[0]!.command).toContain('--tail=2');
    s.push('stdout', Buffer.from('2026-12-05T01:00:00Z (APIServer pid=1) WARNING --api-key sk-zzz\n2026-12-05T01:00:01Z RuntimeError: Engine core initialization failed.\n'));
    s.end({ exitCode: 0, signal: null });
    const r = await p;
    expect(r.source).toEqual({ kind: 'compose', description: 'compose service vllm', timestamps: true });
    expect(textsOf(r.entries)).toEqual(['(APIServer pid=1) WARNING --api-key [redacted]', 'RuntimeError: Engine core initialization failed.']);
    expect(r.entries[1]).toMatchObject({ failure: 'engine-dead' });
  });

  it('a compose service that died of CUDA OOM: its recorded lines with their own timestamps, the failures marked, the result the contract shape', async () => {
    const w = world({ compose: { service: 'vllm', files: ['/srv/llm/compose.yml'] } });
    const p = w.service.tail('gpu1', 'llm', { lines: 300 });
    await tick();
    const recorded = readFileSync(join(__dirname, '../../../fixtures/logs/compose-vllm-oom.timestamps.txt'));
    // As a pipe delivers it: in pieces that cut lines anywhere.
    for (let i = 0; i < recorded.length; i += 97) w.opened[0]!.stream.push('stdout', recorded.subarray(i, i + 97));
    w.opened[0]!.stream.end({ exitCode: 0, signal: null });
    const r = LogsTailResultSchema.parse(await p);
    const lines = r.entries.filter((e) => e.type === 'line');
    expect(lines).toHaveLength(recorded.toString().trimEnd().split('\n').length);
    expect(lines[0]).toMatchObject({ ts: Date.parse('2026-12-05T08:14:01.000007919Z'), text: expect.stringMatching(/^\(APIServer pid=1\) INFO/) });
    expect(new Set(lines.map((l) => l.failure).filter(Boolean))).toEqual(new Set(['cuda-oom', 'traceback', 'engine-dead']));
  });

  it('a container that is not there is LOGS_SOURCE_MISSING; a service with no source LOGS_NOT_CONFIGURED', async () => {
    const w = world({ docker: 'vllm' });
    const p = w.service.tail('gpu1', 'llm', { lines: 5 });
    await tick();
    w.opened[0]!.stream.push('stderr', Buffer.from('Error response from daemon: No such container: vllm\n'));
    w.opened[0]!.stream.end({ exitCode: 1, signal: null });
    await expect(p).rejects.toMatchObject({ code: 'LOGS_SOURCE_MISSING' });
    const none = world({ journal: 'x.service' });
    none.service['options'].hosts.hostConfig('gpu1').services[0]!.logs = undefined;
    await expect(none.service.tail('gpu1', 'llm', { lines: 5 })).rejects.toMatchObject({ code: 'LOGS_NOT_CONFIGURED' });
  });
});

describe('follows through the contract', () => {
  it('become bounded logs.batch events, and end with logs.ended when their lease is not renewed', async () => {
    const w = world({ journal: 'vllm.service' });
    const events: { channel: string; payload: { entries?: LogEntry[]; queued?: number; firstIndex?: number; error?: unknown } }[] = [];
    const follows = new LogFollowEvents({ logs: w.service, emit: (channel, payload) => events.push({ channel, payload: payload as never }), clock: w.clock, maxBatchEntries: 3, leaseMs: 10_000, batchIntervalMs: 200 });
    const f = await follows.start('gpu1', 'llm', { lines: 0 });
    w.opened[0]!.stream.push('stdout', Buffer.from(['1', '2', '3', '4', '5'].map((n) => journalLine(`c${n}`, `l${n}`)).join('')));
    await tick();
    w.clock.advance(200);
    w.clock.advance(200);
    const batches = events.filter((e) => e.channel === 'logs.batch');
    expect(batches.map((b) => b.payload.entries!.length)).toEqual([3, 2]);
    expect(batches[0]!.payload.queued).toBe(2);
    // Numbered across batches, so a reader whose stream skipped one counts what it missed.
    expect(batches.map((b) => b.payload.firstIndex)).toEqual([0, 3]);
    w.opened[0]!.stream.push('stdout', Buffer.from(['6', '7'].map((n) => journalLine(`c${n}`, `l${n}`)).join('')));
    await tick();
    w.clock.advance(200);
    const third = events.filter((e) => e.channel === 'logs.batch')[2]!;
    expect(third.payload).toMatchObject({ firstIndex: 5, queued: 0 });
    expect(third.payload.entries!.map((e) => (e.type === 'line' ? e.text : e.marker))).toEqual(['l6', 'l7']);
    batches.push(third);
    expect(follows.renew([f.id, 'nope'])).toEqual({ renewed: [f.id], unknown: ['nope'] });
    w.clock.advance(10_000);
    w.clock.advance(2_500);
    expect(events.at(-1)).toEqual({ channel: 'logs.ended', payload: { followId: f.id, error: null, endIndex: 7 } });
    // What core emits is what the contract (and so the renderer) accepts.
    for (const b of batches) LogsBatchSchema.parse(b.payload);
    LogsEndedSchema.parse(events.at(-1)!.payload);
    expect(w.opened[0]!.stream.ended).toBe(true);
    follows.dispose();
  });
});
