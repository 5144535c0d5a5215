import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { LogEntry } from '../../../src-preload/contract/index.js';
import { AppError } from '../../../src-main/core/base/index.js';
import { readyFilePath, writeReadyFile } from '../../../src-main/core/instance/index.js';
import { parseLogsArgs } from '../../../src-main/cli/extra/logs-args.js';
import { LogsFollowRun, type FollowIo } from '../../../src-main/cli/extra/logs-follow.js';
import { createOutput } from '../../../src-main/cli/output.js';
import { until } from '../../helpers/until.js';

// `gpu-console logs --follow` against a stand-in for the console's web bridge
// on loopback (the e2e test runs the real console, whose lease is 60 s): the
// lease is renewed every half lease, a batch sent before logs.follow answered
// is not lost, another follow's batches are not printed, Ctrl-C unfollows and
// exits 0, and each way the follow can end from the console's side ends the
// command with a coded error.

const TOKEN = 'test-token-0123';
const LEASE_MS = 3_000;
const line = (text: string): LogEntry => ({ type: 'line', ts: null, text, stream: 'stdout', failure: null, cutBytes: 0, binary: false });

class FakeBridge {
  server!: Server;
  readonly streams = new Set<ServerResponse>();
  readonly calls: { channel: string; input: Record<string, unknown>; at: number }[] = [];
  /** What logs.renew answers as unknown. */
  unknown: string[] = [];
  /** What logs.ended says the follow sent in all. */
  endIndex = 1;

  async start(): Promise<number> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    return (this.server.address() as AddressInfo).port;
  }

  emit(channel: string, payload: unknown): void {
    for (const res of this.streams) res.write(`event: ${channel}\ndata: ${JSON.stringify(payload)}\n\n`);
  }

  async close(): Promise<void> {
    for (const res of this.streams) res.end();
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.headers['x-gpu-console-token'] !== TOKEN) return void res.writeHead(401).end();
    if (req.url === '/api/events') {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(': connected\n\n');
      this.streams.add(res);
      res.on('close', () => this.streams.delete(res));
      // Another tab's follow and a fleet tick share the stream.
      this.emit('fleet.tick', { hosts: [] });
      return;
    }
    let body = '';
    for await (const chunk of req) body += String(chunk);
    const channel = req.url!.slice('/api/'.length);
    const input = JSON.parse(body) as Record<string, unknown>;
    this.calls.push({ channel, input, at: Date.now() });
    const answer = (data: unknown): void => void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ ok: true, data }));
    if (channel === 'logs.follow') {
      // The first batch goes out before the answer does.
      this.emit('logs.batch', { followId: 'f1-gpu-a/m', entries: [line('backlog 1')], queued: 0, firstIndex: 0 });
      this.emit('logs.batch', { followId: 'f9-gpu-a/m', entries: [line('not ours')], queued: 0, firstIndex: 0 });
      await new Promise((r) => setTimeout(r, 50));
      return answer({ followId: 'f1-gpu-a/m', source: { kind: 'file', description: 'file /var/log/m.log', timestamps: false }, leaseMs: LEASE_MS });
    }
    if (channel === 'logs.renew') {
      const ids = input.followIds as string[];
      return answer({ renewed: ids.filter((i) => !this.unknown.includes(i)), unknown: ids.filter((i) => this.unknown.includes(i)) });
    }
    if (channel === 'logs.unfollow') {
      answer({ followId: input.followId, ended: true });
      this.emit('logs.ended', { followId: input.followId, error: null, endIndex: this.endIndex });
      return;
    }
    res.writeHead(404).end();
  }
}

describe('logs --follow against the bridge', () => {
  let dir: string;
  let bridge: FakeBridge;
  let stdout: string[];
  let stderr: string[];
  let interrupt: (() => void) | null;
  const io: FollowIo = {
    onInterrupt(handler) {
      interrupt = handler;
      return () => (interrupt = null);
    },
    onOutputGone: () => () => undefined,
  };

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gc-logs-follow-'));
    bridge = new FakeBridge();
    const port = await bridge.start();
    writeReadyFile(readyFilePath(dir), { ui: `http://127.0.0.1:${port}/#token=${TOKEN}`, proxy: null, pid: process.pid });
    stdout = [];
    stderr = [];
    interrupt = null;
  });
  afterEach(async () => {
    await bridge.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function start(extra: string[] = []): Promise<number> {
    const output = createOutput(false, { stdout: (s) => stdout.push(s), stderr: (s) => stderr.push(s) });
    return new LogsFollowRun(dir, parseLogsArgs(['gpu-a/m', '-f', ...extra], Date.now()), output, io).run();
  }
  const renewals = () => bridge.calls.filter((c) => c.channel === 'logs.renew');

  it('prints its own batches (the one sent before the answer too), renews every half lease, and unfollows on Ctrl-C with exit 0', async () => {
    const run = start(['--grep', 'x', '--tail', '5']);
    await until(() => stdout.length === 1, { what: 'the early batch printed' });
    expect(bridge.calls[0]).toMatchObject({ channel: 'logs.follow', input: { label: 'gpu-a', serviceId: 'm', lines: 5, filter: { pattern: 'x', regex: false, ignoreCase: false } } });
    bridge.emit('logs.batch', { followId: 'f1-gpu-a/m', entries: [line('live 1'), { type: 'marker', marker: 'dropped', text: 'dropped 3 lines', code: 'LOGS_LINES_DROPPED', count: 3, at: 0 }, line('live 2')], queued: 0, firstIndex: 1 });
    await until(() => stdout.length === 3, { what: 'the live batch' });
    expect(stdout).toEqual(['backlog 1\n', 'live 1\n', 'live 2\n']);
    bridge.endIndex = 4;
    expect(stderr).toEqual(['[dropped 3 lines]\n']);

    const followedAt = bridge.calls[0]!.at;
    await until(() => renewals().length >= 2, { timeoutMs: LEASE_MS * 2, what: 'two renewals' });
    const [first, second] = renewals();
    expect(first!.input).toEqual({ followIds: ['f1-gpu-a/m'] });
    // Every half lease: well inside the lease, not a busy loop.
    expect(first!.at - followedAt).toBeGreaterThanOrEqual(LEASE_MS / 2 - 100);
    expect(first!.at - followedAt).toBeLessThan(LEASE_MS);
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(LEASE_MS / 2 - 100);

    interrupt!();
    expect(await run).toBe(0);
    expect(bridge.calls.filter((c) => c.channel === 'logs.unfollow').map((c) => c.input)).toEqual([{ followId: 'f1-gpu-a/m' }]);
    expect(interrupt).toBeNull(); // the handler is removed: a later Ctrl-C is the default again
    const renewed = renewals().length;
    await new Promise((r) => setTimeout(r, LEASE_MS / 2 + 300));
    expect(renewals().length).toBe(renewed);
  });

  it('says the lines its backed-up event stream skipped, with their exact count, and leaves a repeat out', async () => {
    const run = start();
    await until(() => stdout.length === 1, { what: 'the early batch printed' });
    // Index 0 was seen; 1..37 never came (the bridge skipped them for this reader).
    bridge.emit('logs.batch', { followId: 'f1-gpu-a/m', entries: [line('after the gap')], queued: 0, firstIndex: 38 });
    // Sent again from 38: only 39 is new.
    bridge.emit('logs.batch', { followId: 'f1-gpu-a/m', entries: [line('after the gap'), line('new')], queued: 0, firstIndex: 38 });
    // The follow ends having sent 45: 40..44 were skipped too.
    bridge.emit('logs.ended', { followId: 'f1-gpu-a/m', error: null, endIndex: 45 });
    await expect(run).rejects.toMatchObject({ code: 'LOGS_FOLLOW_UNKNOWN' });
    expect(stdout).toEqual(['backlog 1\n', 'after the gap\n', 'new\n']);
    expect(stderr).toEqual(["[37 lines lost: the console's event stream was backed up]\n", "[5 lines lost: the console's event stream was backed up]\n"]);
  });

  it('with --json the loss is a marker entry on stdout', async () => {
    const run = start(['--json']);
    await until(() => stdout.length === 1, { what: 'the early batch printed' });
    bridge.emit('logs.batch', { followId: 'f1-gpu-a/m', entries: [line('after the gap')], queued: 0, firstIndex: 38 });
    await until(() => stdout.length === 3, { what: 'the marker and the line' });
    interrupt!();
    expect(await run).toBe(0);
    const marker = JSON.parse(stdout[1]!) as LogEntry;
    expect(marker).toMatchObject({ type: 'marker', marker: 'stream-lost', count: 37, code: 'LOGS_STREAM_BACKED_UP', text: "37 lines lost: the console's event stream was backed up" });
    expect(JSON.parse(stdout[2]!)).toMatchObject({ type: 'line', text: 'after the gap' });
    expect(stderr).toEqual([]);
  });

  it('a coded logs.ended ends the command with that error', async () => {
    const run = start();
    await until(() => stdout.length === 1, { what: 'the early batch printed' });
    bridge.emit('logs.ended', { followId: 'f1-gpu-a/m', error: { code: 'LOGS_NOT_PERMITTED', message: 'root may not read the journal: add it to systemd-journal', retryable: false, details: {} }, endIndex: 1 });
    await expect(run).rejects.toMatchObject({ code: 'LOGS_NOT_PERMITTED', message: expect.stringContaining('systemd-journal') });
    expect(interrupt).toBeNull();
  });

  it('another follow ending is not ours; the console closing the stream is CLI_BRIDGE_UNREACHABLE', async () => {
    const run = start();
    await until(() => stdout.length === 1, { what: 'the early batch printed' });
    bridge.emit('logs.ended', { followId: 'f9-gpu-a/m', error: { code: 'LOGS_NOT_PERMITTED', message: 'not ours', retryable: false, details: {} }, endIndex: 0 });
    await new Promise((r) => setTimeout(r, 100));
    for (const res of bridge.streams) res.end();
    const err = await run.then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).code).toBe('CLI_BRIDGE_UNREACHABLE');
  });

  it('a renewal the console does not know ends the command with LOGS_FOLLOW_UNKNOWN', async () => {
    bridge.unknown = ['f1-gpu-a/m'];
    await expect(start()).rejects.toMatchObject({ code: 'LOGS_FOLLOW_UNKNOWN' });
    expect(renewals()).toHaveLength(1);
  });
});
