import { appendFileSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { LogEntry } from '../../../src-preload/contract/index.js';
import { ConfigSchema, type HostConfig } from '../../../src-main/core/config/index.js';
import { LogsService, type LogFollow } from '../../../src-main/core/logs/index.js';
import type { SshSession } from '../../../src-main/core/ssh/index.js';
import { descendants } from '../../helpers/sshd.js';
import { until } from '../../helpers/until.js';
import { createTestJournal, HAVE_JOURNAL, type TestJournal } from './journal.js';
import { HAVE_SSH_PARTS, loopbackWorld, TRANSPORTS, type LoopbackWorld, type Transport } from './sessions.js';

// Service logs over a real sshd on loopback, both transports: GNU `tail -F`
// on a file rotated and truncated while followed, a 1 MB line, ten followers
// on one channel (one remote tail), a follow through a dropped link (a journal
// resumes by cursor; a file says its gap), a fast writer against a follower
// that does not read (bounded; dropped + received = written), and the real
// journalctl reading a real journal file (journal.ts says how).

const dataDir = mkdtempSync(join(tmpdir(), 'gclogs-'));
let journal: TestJournal | null = null;
let world: LoopbackWorld;
const services: LogsService[] = [];

beforeAll(async () => {
  if (!HAVE_SSH_PARTS) return;
  if (HAVE_JOURNAL) journal = createTestJournal(dataDir);
  world = await loopbackWorld({ sessionEnv: { PATH: `${journal?.binDir ?? dataDir}:/usr/local/bin:/usr/bin:/bin` } });
}, 30_000);
afterEach(() => {
  for (const s of services.splice(0)) s.dispose();
});
afterAll(async () => {
  await world?.dispose();
  rmSync(dataDir, { recursive: true, force: true });
});

function logsFor(session: SshSession, logs: Record<string, unknown>, options: Partial<ConstructorParameters<typeof LogsService>[0]> = {}): LogsService {
  const host: HostConfig = ConfigSchema.parse({
    hosts: [{ label: session.label, ssh: { host: '127.0.0.1', user: 'root', agent: true }, services: [{ id: 'llm', kind: 'vllm', remotePort: 8000, model: 'm', logs }] }],
  }).hosts[0]!;
  const service = new LogsService({ hosts: { hostConfig: () => host, execStream: (_l, command, o) => session.execStream!(command, o) }, ...options });
  services.push(service);
  return service;
}

/** Everything a follower gets, collected as it comes. */
function collect(f: LogFollow): LogEntry[] {
  const got: LogEntry[] = [...f.queue.take()];
  f.queue.onDidQueue(() => got.push(...f.queue.take()));
  return got;
}
const lines = (got: LogEntry[]) => got.filter((e) => e.type === 'line').map((e) => (e.type === 'line' ? e.text : ''));
const markers = (got: LogEntry[]) => got.filter((e) => e.type === 'marker').map((e) => (e.type === 'marker' ? e.marker : ''));
const numbered = (from: number, to: number, prefix = 'line') => Array.from({ length: to - from + 1 }, (_, i) => `${prefix} ${from + i}`);

/** Remote processes (the sshd is on loopback: its sessions run here) whose command line holds `needle`. */
function remoteProcesses(needle: string): number {
  let n = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      if (argv[0] === 'tail' && argv.includes(needle)) n++;
    } catch {
      // gone
    }
  }
  return n;
}

async function connected(transport: Transport): Promise<SshSession> {
  const s = world.session(transport);
  await s.connect();
  return s;
}

function dropLink(): void {
  for (const pid of descendants(world.sshd.proc.pid!)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}

describe.skipIf(!HAVE_SSH_PARTS).each(TRANSPORTS)('service logs over real sshd, %s transport', (transport) => {
  it('tail -F through a rotation and a truncation: every line once, in order, and both said', async () => {
    const path = join(dataDir, `rot-${transport}.log`);
    writeFileSync(path, numbered(1, 50).join('\n') + '\n');
    const logs = logsFor(await connected(transport), { file: path });
    const got = collect(await logs.follow(`lg`, 'llm', { lines: 1000 }));
    await until(() => lines(got).length >= 50, { what: 'the backlog' });
    appendFileSync(path, numbered(51, 100).join('\n') + '\n');
    await until(() => lines(got).at(-1) === 'line 100', { what: 'line 100' });
    // logrotate's create mode: the old file moved aside, a new one in its place.
    renameSync(path, `${path}.1`);
    writeFileSync(path, numbered(101, 150).join('\n') + '\n');
    await until(() => lines(got).at(-1) === 'line 150', { what: 'line 150 from the new file', timeoutMs: 15_000 });
    // copytruncate: the same file emptied, then written again.
    truncateSync(path, 0);
    await until(() => markers(got).includes('file-truncated'), { what: 'tail to notice the truncation', timeoutMs: 15_000 });
    appendFileSync(path, numbered(151, 200).join('\n') + '\n');
    await until(() => lines(got).at(-1) === 'line 200', { what: 'line 200 after the truncation', timeoutMs: 15_000 });
    expect(lines(got)).toEqual(numbered(1, 200));
    // GNU tail says "has been replaced", or (when it looks between the rename and the create) "has become
    // inaccessible" then "has appeared": either way a rotation, then the truncation.
    expect(markers(got).filter((m) => m !== 'file-missing')).toEqual(['file-rotated', 'file-truncated']);
  }, 60_000);

  it('a 1 MB line arrives cut to the bound, saying how much was cut; the next line is whole', async () => {
    const path = join(dataDir, `big-${transport}.log`);
    writeFileSync(path, `${'x'.repeat(1024 * 1024)}\nafter the big one\n`);
    const r = await logsFor(await connected(transport), { file: path }).tail('lg', 'llm', { lines: 2 });
    expect(r.entries).toHaveLength(2);
    expect(r.entries[0]).toMatchObject({ type: 'line', cutBytes: 1024 * 1024 - 16 * 1024 });
    expect(r.entries[0]!.type === 'line' && r.entries[0]!.text.length).toBe(16 * 1024);
    expect(r.entries[1]).toMatchObject({ text: 'after the big one', cutBytes: 0 });
  });

  it('a file that is not there is LOGS_SOURCE_MISSING, in the words of the real tail', async () => {
    await expect(logsFor(await connected(transport), { file: join(dataDir, 'no-such.log') }).tail('lg', 'llm', { lines: 5 })).rejects.toMatchObject({ code: 'LOGS_SOURCE_MISSING' });
  });

  it('ten followers share one channel: one tail runs on the host, and it ends when the last follower leaves', async () => {
    const path = join(dataDir, `ten-${transport}.log`);
    writeFileSync(path, 'first\n');
    const logs = logsFor(await connected(transport), { file: path });
    const follows = await Promise.all(Array.from({ length: 10 }, () => logs.follow('lg', 'llm', { lines: 10 })));
    const got = follows.map(collect);
    appendFileSync(path, 'second\n');
    await until(() => got.every((g) => lines(g).includes('second')), { what: 'every follower to get the new line' });
    expect(logs.channelCount).toBe(1);
    expect(remoteProcesses(path)).toBe(1);
    for (const f of follows) f.dispose();
    await until(() => remoteProcesses(path) === 0, { what: 'the remote tail to end', timeoutMs: 5_000 });
  });

  it('a file follow through a dropped link comes back and says its gap (LOGS_GAP)', async () => {
    const path = join(dataDir, `drop-${transport}.log`);
    writeFileSync(path, 'before\n');
    const session = await connected(transport);
    const logs = logsFor(session, { file: path });
    const got = collect(await logs.follow('lg', 'llm', { lines: 10 }));
    await until(() => lines(got).includes('before'), { what: 'the first line' });
    dropLink();
    await until(() => markers(got).includes('link-lost'), { what: 'the follow to see the link go' });
    await until(() => markers(got).includes('gap'), { what: 'the follow to come back', timeoutMs: 20_000 });
    // The new tail starts at the end of the file once its channel is open: write until a line comes through.
    let n = 0;
    await until(() => {
      appendFileSync(path, `after ${++n}\n`);
      return lines(got).some((l) => l.startsWith('after'));
    }, { what: 'a line written after the return', intervalMs: 200 });
    const gap = got.find((e) => e.type === 'marker' && e.marker === 'gap');
    expect(gap).toMatchObject({ code: 'LOGS_GAP', count: expect.any(Number) });
    expect(lines(got)[0]).toBe('before');
    expect(lines(got).slice(1).every((l) => /^after \d+$/.test(l))).toBe(true);
    expect(markers(got)).toEqual(['link-lost', 'gap']);
  }, 40_000);

  it('a fast writer and a follower that does not read: memory held at the bounds, dropped + received = written', async () => {
    const total = 100_000;
    const logs = logsFor(await connected(transport), { command: { tail: 'true', follow: `seq 1 ${total}; sleep 60` } }, { followerQueueEntries: 1000 });
    const f = await logs.follow('lg', 'llm', { lines: 0 });
    let maxQueued = 0;
    const shared = logs.sharedFollow('lg', 'llm')!;
    // Nobody reads until the writer is done: the queue stays at its bound, the rest is counted.
    await until(() => {
      maxQueued = Math.max(maxQueued, f.queue.queued);
      return f.queue.droppedTotal + f.queue.queued >= total;
    }, { what: `${total} lines written`, timeoutMs: 30_000, intervalMs: 5 });
    expect(maxQueued).toBeLessThanOrEqual(1000 + 16);
    const entries = f.queue.take();
    const received = entries.filter((e) => e.type === 'line').length;
    const dropped = entries.filter((e) => e.type === 'marker' && e.marker === 'dropped').reduce((n, e) => n + (e.type === 'marker' ? e.count ?? 0 : 0), 0);
    expect(received).toBe(1000);
    expect(dropped).toBe(total - received);
    expect(entries.at(-1)).toMatchObject({ type: 'marker', marker: 'dropped', code: 'LOGS_LINES_DROPPED', count: total - received });
    expect(shared.opened).toBe(1);
    f.dispose();
  }, 60_000);

  describe.skipIf(!HAVE_JOURNAL)('journalctl on a real journal (systemd-journal-remote wrote it)', () => {
    it('tails the last N entries of the unit, with their journal timestamps', async () => {
      const unit = `tail-${transport}.service`;
      journal!.append(unit, ['INFO starting', 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.16 GiB', 'INFO done']);
      journal!.append('other.service', ['not ours']);
      const r = await logsFor(await connected(transport), { journal: unit }).tail('lg', 'llm', { lines: 2 });
      expect(r.entries.map((e) => (e.type === 'line' ? e.text : ''))).toEqual(['torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.16 GiB', 'INFO done']);
      expect(r.entries[0]).toMatchObject({ failure: 'cuda-oom', ts: expect.any(Number) });
      expect(Math.abs((r.entries[0] as { ts: number }).ts - Date.now())).toBeLessThan(60_000);
    });

    it('follows through a dropped link and resumes after the last cursor: nothing lost, nothing repeated', async () => {
      const unit = `follow-${transport}.service`;
      journal!.append(unit, ['e1', 'e2']);
      const logs = logsFor(await connected(transport), { journal: unit });
      const got = collect(await logs.follow('lg', 'llm', { lines: 10 }));
      await until(() => lines(got).includes('e2'), { what: 'the backlog' });
      journal!.append(unit, ['e3']);
      await until(() => lines(got).includes('e3'), { what: 'a line followed live' });
      dropLink();
      await until(() => markers(got).includes('link-lost'), { what: 'the follow to see the link go' });
      journal!.append(unit, ['e4 written while the link was down', 'e5']);
      // Reconnect backoff + login + journalctl's restart: 20 s was missed once under load average 8 (a full CI run beside other work).
      await until(() => lines(got).includes('e5'), { what: 'the lines written during the outage', timeoutMs: 40_000 });
      journal!.append(unit, ['e6']);
      await until(() => lines(got).includes('e6'), { what: 'a line after the return' });
      expect(lines(got)).toEqual(['e1', 'e2', 'e3', 'e4 written while the link was down', 'e5', 'e6']);
      expect(markers(got)).toEqual(['link-lost', 'resumed']);
    }, 70_000);
  });
});
