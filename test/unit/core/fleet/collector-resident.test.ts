import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock, silentLogger } from '../../../../src-main/core/base/index.js';
import { HostCollector } from '../../../../src-main/core/fleet/collector.js';
import { RESIDENT_LOOP, RESIDENT_PREAMBLE, residentScript } from '../../../../src-main/core/fleet/collector-resident-script.js';
import { FleetErrorCode } from '../../../../src-main/core/fleet/errors.js';
import { ExecChunkQueue, type ExecStream } from '../../../../src-main/core/ssh/exec-stream.js';
import type { ExecRunner, HttpGet } from '../../../../src-main/core/telemetry/index.js';
import { until } from '../../../helpers/until.js';
import { DEMO_RESIDENT_LOOP, DEMO_RESIDENT_PREAMBLE, parseResidentScript, planRequest } from '../../../../src-main/demo/collector-resident.js';
import { tokenize } from '../../../../src-main/demo/exec.js';

// The resident collector (issue #31 item 1): ONE exec stays open on the host
// — here a real dash on this machine, its stdin a pipe as an SSH channel's is —
// and each poll is one request line on it. What the console writes there is
// data the loop checks, never a command; a channel that breaks fails only that
// poll's parts, is reopened after a backoff, and after three breaks in a row
// the host is read by one exec a poll, saying why.

let server: Server;
let port: number;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'resident-'));
  server = createServer((req, res) => {
    if (req.url === '/hang') return;
    res.end(req.url === '/huge' ? 'x'.repeat(200_000) : `answer ${req.url}`);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  await new Promise<void>((r) => server.close(() => r()));
  rmSync(dir, { recursive: true, force: true });
});

/** A dash process as an SSH exec stream: stdout/stderr chunks, stdin writable when `stdin` is true. */
function dashStream(command: string, procs: ChildProcess[], stdin = true, written: string[] = []): ExecStream {
  const q = new ExecChunkQueue();
  const p = spawn('dash', ['-c', command], { stdio: ['pipe', 'pipe', 'pipe'] });
  procs.push(p);
  p.stdout.on('data', (d: Buffer) => q.push('stdout', d));
  p.stderr.on('data', (d: Buffer) => q.push('stderr', d));
  p.on('close', (code, signal) => q.end({ exitCode: code, signal }));
  p.stdin.on('error', () => undefined);
  q.attach({
    pause: () => p.stdout.pause(),
    resume: () => p.stdout.resume(),
    close: () => {
      p.stdin.end();
      p.kill('SIGKILL');
    },
    ...(stdin ? { write: (d: string) => void (written.push(d), p.stdin.write(d)) } : {}),
  });
  return q;
}

function dashExec(command: string): ReturnType<ExecRunner> {
  return new Promise((resolve) => {
    const p = spawn('dash', ['-c', command], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('close', (code) => resolve({ exitCode: code, signal: null, stdout, stderr }));
  });
}

function host(options: { stdin?: boolean; script?: (s: string) => string } = {}) {
  const clock = new FakeClock(Date.now());
  const execs: string[] = [];
  const procs: ChildProcess[] = [];
  const written: string[] = [];
  const collector = new HostCollector({
    label: 'h',
    exec: (command) => {
      execs.push(command);
      return dashExec(command);
    },
    stream: (command) => dashStream(options.script ? options.script(command) : command, procs, options.stdin ?? true, written),
    clock,
    logger: silentLogger,
    httpTimeoutMs: 1500,
  });
  const tunnel: HttpGet = () => Promise.reject(new Error('no tunnel in this test'));
  return { collector, clock, execs, procs, written, get: collector.httpGet('127.0.0.1', port, tunnel) };
}

const settle = <T>(p: Promise<T>) => p.then((v) => ({ ok: true as const, v }), (e: { code: string; message: string }) => ({ ok: false as const, code: e.code, message: e.message }));

type Host = ReturnType<typeof host>;
const poll = (h: Host, command = 'echo gpu', timeoutMs = 5000, path = '/metrics') => Promise.all([settle(h.collector.exec(command, { timeoutMs })), settle(h.get(path))]);

describe('the resident collector', () => {
  it('answers polls on one open exec once a command was seen twice; each poll is one request line', async () => {
    const h = host();
    await h.collector.prepare();
    h.execs.length = 0;
    // Poll 1: the channel opens for the endpoint; the command is not in its table yet and runs on an exec.
    await poll(h);
    expect(h.procs).toHaveLength(1);
    expect(h.execs).toHaveLength(1);
    // Poll 2: the command joins the table on its second sight (the channel reopens with it); then polls are lines.
    for (let i = 0; i < 4; i++) {
      const [gpu, metrics] = await poll(h);
      expect(gpu).toEqual({ ok: true, v: { exitCode: 0, signal: null, stdout: 'gpu\n', stderr: '' } });
      expect(metrics).toEqual({ ok: true, v: { status: 200, text: 'answer /metrics' } });
    }
    expect(h.procs).toHaveLength(2);
    expect(h.execs).toHaveLength(1);
    expect(h.collector.state()).toMatchObject({ mode: 'collector', reason: null });
    // A command the table lacks runs on an exec of its own; the others stay on the channel.
    const [other] = await poll(h, 'echo other');
    expect(other).toMatchObject({ ok: true, v: { stdout: 'other\n' } });
    expect(h.execs).toHaveLength(2);
    h.collector.dispose();
  });

  it('runs nothing a request line says: shell words are refused before any part runs', async () => {
    const marker = join(dir, 'pwned');
    const procs: ChildProcess[] = [];
    const b = 'GCBtest';
    const stream = dashStream(residentScript(b, ['echo ok'], true), procs);
    let out = '';
    const lines = [
      `q x 0 1 u 127.0.0.1 ${port} /$(touch${'${IFS}'}${marker})`,
      `q x 0 1; touch ${marker}`,
      `q x \`touch ${marker}\` 1`,
      `q u 127.0.0.1 ${port} /a|touch${'${IFS}'}${marker}`,
      `touch ${marker}`,
      'q x 7 1',
      `q u 127.0.0.1 ${port} /ok`,
    ];
    for (const l of lines) stream.writeStdin!(`${l}\n`);
    const done = (async () => {
      for await (const c of stream) {
        out += c.data.toString();
        if (out.split(`${b} E\n`).length > lines.length) break;
      }
    })();
    await done;
    expect(existsSync(marker)).toBe(false);
    expect(out.match(new RegExp(`${b} ! `, 'g'))).toHaveLength(lines.length - 1);
    expect(out).toContain(`answer /ok\n${b} } 200`);
  });

  it('a channel that dies fails that poll alone, reopens after a backoff, and after three breaks the host reads one exec a poll', async () => {
    const h = host();
    await h.collector.prepare();
    await poll(h);
    expect((await poll(h))[1]).toMatchObject({ ok: true });
    for (let broken = 1; broken <= 3; broken++) {
      // curl waits on the hung endpoint while the loop is killed (the channel of this round: the first one, then reopened ones).
      const lines = h.written.length;
      const pending = poll(h, 'echo gpu', 5000, '/hang');
      await until(() => h.written.length > lines);
      await new Promise((r) => setTimeout(r, 50));
      h.procs.at(-1)!.kill('SIGKILL');
      const [gpu, metrics] = await pending;
      expect(gpu).toMatchObject({ ok: false, code: FleetErrorCode.COLLECTOR_CHANNEL_CLOSED });
      expect(metrics).toMatchObject({ ok: false, code: FleetErrorCode.COLLECTOR_CHANNEL_CLOSED });
      // During the backoff the poll is read by one exec, whole.
      const execs = h.execs.length;
      expect((await poll(h))[1]).toMatchObject({ ok: true, v: { text: 'answer /metrics' } });
      expect(h.execs).toHaveLength(execs + 1);
      h.clock.advance(60_000);
    }
    expect(h.collector.state()).toMatchObject({ mode: 'collector', reason: { code: FleetErrorCode.COLLECTOR_RESIDENT_OFF, message: expect.stringMatching(/3 resident collector channels in a row broke/) } });
    const procs = h.procs.length;
    expect((await poll(h))[1]).toMatchObject({ ok: true });
    expect(h.procs).toHaveLength(procs);
    // Tried again five minutes later.
    h.clock.advance(5 * 60_000);
    expect((await poll(h))[1]).toMatchObject({ ok: true });
    expect(h.procs).toHaveLength(procs + 1);
    expect(h.collector.state().reason).toBeNull();
    h.collector.dispose();
  });

  it('a banner instead of the loop, an answer past its cap, or past its deadline: coded, the channel closed', async () => {
    // The loop never starts: nothing was asked, so each poll is read by one exec; three in a row turn it off.
    const forced = host({ script: () => 'echo "This account is restricted"; exit 1' });
    await forced.collector.prepare();
    for (let i = 0; i < 3; i++) {
      expect((await poll(forced))[1]).toMatchObject({ ok: true, v: { text: 'answer /metrics' } });
      forced.clock.advance(60_000);
    }
    expect(forced.collector.state().reason).toMatchObject({ code: FleetErrorCode.COLLECTOR_RESIDENT_OFF, message: expect.stringContaining('This account is restricted') });

    const h = host();
    await h.collector.prepare();
    await poll(h);
    await poll(h);
    const huge = await settle(h.get('/huge', { maxBytes: 1000 }));
    expect(huge).toMatchObject({ ok: false, code: FleetErrorCode.COLLECTOR_TOO_LARGE });
    expect(h.procs.at(-1)!.killed).toBe(true);

    const slow = host();
    await slow.collector.prepare();
    await poll(slow, 'sleep 30', 1000);
    const pending = poll(slow, 'sleep 30', 1000);
    await new Promise((r) => setTimeout(r, 200));
    slow.clock.advance(1000 + 1500 + 2000);
    expect((await pending)[0]).toMatchObject({ ok: false, code: FleetErrorCode.COLLECTOR_TIMEOUT });
    for (const x of [forced, h, slow]) x.collector.dispose();
  });

  it('a transport that gives no stdin (openssh today) reads one exec a poll and says so', async () => {
    const h = host({ stdin: false });
    await h.collector.prepare();
    expect((await poll(h))[1]).toMatchObject({ ok: true, v: { text: 'answer /metrics' } });
    expect(h.collector.state()).toMatchObject({ mode: 'collector', reason: { code: FleetErrorCode.COLLECTOR_RESIDENT_OFF, message: expect.stringMatching(/stdin/) } });
    const execs = h.execs.length;
    expect((await poll(h))[1]).toMatchObject({ ok: true, v: { text: 'answer /metrics' } });
    expect(h.execs).toHaveLength(execs + 1);
  });

  it("the demo's copies are the console's text, and it reads the table and the words as the loop does", () => {
    expect(DEMO_RESIDENT_PREAMBLE).toBe(RESIDENT_PREAMBLE);
    expect(DEMO_RESIDENT_LOOP).toBe(RESIDENT_LOOP);
    const script = residentScript('GCBab12', ['nvidia-smi --query-gpu=index --format=csv', "sh -c 'echo \"$1\"' x 'a b'"], true);
    const parsed = parseResidentScript(script, tokenize);
    expect(parsed).toEqual({ boundary: 'GCBab12', commands: ['nvidia-smi --query-gpu=index --format=csv', "sh -c 'echo \"$1\"' x 'a b'"] });
    expect(planRequest('q h 1.5 x 1 3 u ::1 8000 /metrics', parsed!.commands)).toEqual({ timeoutS: 1.5, execs: [parsed!.commands[1]], urls: ['http://[::1]:8000/metrics'] });
    expect(planRequest('q x 2 3', parsed!.commands)).toEqual({ refused: 'bad x' });
    expect(planRequest('q u 127.0.0.1 80 /$(id)', parsed!.commands)).toEqual({ refused: 'bad u' });
  });
});
