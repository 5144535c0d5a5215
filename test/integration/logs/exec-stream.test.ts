import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExecChunk, ExecStream } from '../../../src-main/core/ssh/index.js';
import { descendants } from '../../helpers/sshd.js';
import { until } from '../../helpers/until.js';
import { HAVE_SSH_PARTS, loopbackWorld, TRANSPORTS, type LoopbackWorld } from './sessions.js';

// Streaming exec on both transports against a real sshd on loopback: output
// as it arrives, the exit status, backpressure that holds a fast writer at the
// queue's bound (SSH flow control, not memory), a close that kills the remote
// command's process group, and a lost link as SSH_DISCONNECTED.

let world: LoopbackWorld;

beforeAll(async () => {
  if (HAVE_SSH_PARTS) world = await loopbackWorld();
}, 30_000);
afterAll(async () => {
  await world?.dispose();
});

/** Processes on this machine whose command line contains `needle` (the sshd is on loopback: the host is here). */
function processesWith(needle: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' ').includes(needle)) out.push(Number(name));
    } catch {
      // gone
    }
  }
  return out;
}

async function collect(stream: ExecStream, fd: ExecChunk['fd'] = 'stdout'): Promise<string> {
  let text = '';
  for await (const c of stream) if (c.fd === fd) text += c.data.toString('utf8');
  return text;
}

describe.skipIf(!HAVE_SSH_PARTS).each(TRANSPORTS)('streaming exec, %s transport', (transport) => {
  it('delivers output as it arrives, then the exit status; stderr apart', async () => {
    const s = world.session(transport);
    await s.connect();
    const stream = s.execStream!('echo first; echo oops >&2; read -r _ </dev/null; sleep 0.6; echo second; exit 7');
    const it = stream[Symbol.asyncIterator]();
    const t0 = Date.now();
    let seen = '';
    while (!seen.includes('first')) {
      const r = await it.next();
      if (r.done) break;
      if (r.value.fd === 'stdout') seen += r.value.data.toString();
    }
    // The first line came before the command ended (it sleeps 0.6 s after it).
    expect(Date.now() - t0).toBeLessThan(3_000);
    let rest = '';
    let err = '';
    for (;;) {
      const r = await it.next();
      if (r.done) break;
      if (r.value.fd === 'stdout') rest += r.value.data.toString();
      else err += r.value.data.toString();
    }
    expect(rest).toContain('second');
    expect(err).toContain('oops');
    await expect(stream.exit).resolves.toEqual({ exitCode: 7, signal: null });
  });

  it("a command's own exit 255 is its exit, not a lost link (ssh says nothing either way on openssh)", async () => {
    const s = world.session(transport);
    await s.connect();
    const stream = s.execStream!('echo bye; exit 255');
    expect(await collect(stream)).toBe('bye\n');
    await expect(stream.exit).resolves.toMatchObject({ exitCode: 255 });
    expect(s.state).toBe('connected');
  });

  it('holds a fast writer at the bound while nobody reads, and loses nothing once read', async () => {
    const s = world.session(transport);
    await s.connect();
    const total = 16 * 1024 * 1024;
    const highWaterBytes = 64 * 1024;
    const stream = s.execStream!(`head -c ${total} /dev/zero`, { highWaterBytes });
    await until(() => stream.paused, { what: 'the stream to pause for its consumer' });
    await new Promise((r) => setTimeout(r, 500));
    // Paused: the queue holds at most the bound plus one chunk, and the command has not finished.
    expect(stream.bufferedBytes).toBeLessThanOrEqual(highWaterBytes + 128 * 1024);
    expect(stream.paused).toBe(true);
    let got = 0;
    let maxHeld = 0;
    for await (const c of stream) {
      got += c.data.length;
      maxHeld = Math.max(maxHeld, stream.bufferedBytes);
    }
    expect(got).toBe(total);
    expect(maxHeld).toBeLessThanOrEqual(highWaterBytes + 128 * 1024);
    await expect(stream.exit).resolves.toMatchObject({ exitCode: 0 });
  }, 30_000);

  it('close() ends the remote command and everything it started (its process group)', async () => {
    const s = world.session(transport);
    await s.connect();
    const tag = `${3000 + Math.floor(Math.random() * 900)}.${transport === 'builtin' ? 1 : 2}`;
    const stream = s.execStream!(`echo ready; sleep ${tag} | cat`);
    const it = stream[Symbol.asyncIterator]();
    await it.next();
    await until(() => processesWith(`sleep ${tag}`).length > 0, { what: 'the remote sleep to start' });
    stream.close();
    await expect(stream.exit).rejects.toMatchObject({ code: 'SSH_CANCELLED' });
    await until(() => processesWith(`sleep ${tag}`).length === 0, { timeoutMs: 5_000, what: `the remote "sleep ${tag}" to be killed` });
  });

  it('the link going away under a running command is SSH_DISCONNECTED', async () => {
    const s = world.session(transport);
    await s.connect();
    const stream = s.execStream!('echo up; sleep 60');
    const it = stream[Symbol.asyncIterator]();
    await it.next();
    // The host drops every session (sshd's listener stays): the link goes, as on a network cut.
    for (const pid of descendants(world.sshd.proc.pid!)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    await expect(stream.exit).rejects.toMatchObject({ code: 'SSH_DISCONNECTED' });
    await expect(it.next()).rejects.toMatchObject({ code: 'SSH_DISCONNECTED' });
  });
});
