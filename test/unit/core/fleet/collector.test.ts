import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeClock, silentLogger } from '../../../../src-main/core/base/index.js';
import { HostCollector } from '../../../../src-main/core/fleet/collector.js';
import { FleetErrorCode } from '../../../../src-main/core/fleet/errors.js';
import { TelemetryErrorCode, type ExecRunner, type HttpGet } from '../../../../src-main/core/telemetry/index.js';

// The collector under the sources' seams: a "host" that is a real dash on this
// machine (curl, timeout) and a loopback HTTP server for its model server; the
// answer can be altered on the way (a banner, a cut, another shell) to show
// that each failure stays with its own part or falls back with its reason.

type Exec = Awaited<ReturnType<ExecRunner>> & { truncated?: boolean };
let server: Server;
let port: number;

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/hang') return;
    res.writeHead(req.url === '/missing' ? 404 : 200);
    res.end(req.url === '/big' ? 'x'.repeat(5000) : `answer ${req.url}`);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

function dash(command: string): Promise<Exec> {
  return new Promise((resolve, reject) => {
    const p = spawn('dash', ['-c', command], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    p.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    p.on('error', reject);
    p.on('close', (code) => resolve({ exitCode: code, signal: null, stdout, stderr }));
  });
}

interface Host {
  collector: HostCollector;
  clock: FakeClock;
  execs: string[];
  tunnelGets: string[];
  get: HttpGet;
}

/** A collector over dash; `alter` rewrites each collector answer (the probe passes unless `probe` says otherwise). */
function host(options: { alter?: (out: Exec) => Exec; probe?: string; httpTimeoutMs?: number } = {}): Host {
  const clock = new FakeClock(Date.now());
  const execs: string[] = [];
  const tunnelGets: string[] = [];
  const exec: ExecRunner = async (command) => {
    execs.push(command);
    if (command.startsWith('gc_p=') && options.probe !== undefined) return { exitCode: 0, signal: null, stdout: options.probe, stderr: '' };
    const out = await dash(command);
    return command.startsWith('gc_p=') || !options.alter ? out : options.alter(out);
  };
  const collector = new HostCollector({ label: 'h', exec, clock, logger: silentLogger, httpTimeoutMs: options.httpTimeoutMs ?? 2000 });
  const tunnel: HttpGet = (path) => {
    tunnelGets.push(path);
    return Promise.resolve({ status: 200, text: `tunnel ${path}` });
  };
  return { collector, clock, execs, tunnelGets, get: collector.httpGet('127.0.0.1', port, tunnel) };
}

const settle = <T>(p: Promise<T>) => p.then((v) => ({ ok: true as const, v }), (e: { code: string; message: string }) => ({ ok: false as const, code: e.code, message: e.message }));

describe('HostCollector', () => {
  it('answers a poll\'s GPU exec and every endpoint from one exec, each part with its own result', async () => {
    const h = host({ httpTimeoutMs: 600 });
    await h.collector.prepare();
    expect(h.collector.state()).toEqual({ mode: 'collector', reason: null, clockSkewS: null });
    h.execs.length = 0;
    const [gpu, metrics, hang, missing] = await Promise.all([
      settle(h.collector.exec('echo "0, NVIDIA L20, 46068"', { timeoutMs: 5000 })),
      settle(h.get('/metrics')),
      settle(h.get('/hang')),
      settle(h.get('/missing')),
    ]);
    expect(h.execs).toHaveLength(1);
    expect(gpu).toEqual({ ok: true, v: { exitCode: 0, signal: null, stdout: '0, NVIDIA L20, 46068\n', stderr: '' } });
    expect(metrics).toEqual({ ok: true, v: { status: 200, text: 'answer /metrics' } });
    // the hung endpoint fails alone, with its own code; the others were read
    expect(hang).toMatchObject({ ok: false, code: FleetErrorCode.COLLECTOR_PART_TIMEOUT });
    expect(missing).toEqual({ ok: true, v: { status: 404, text: 'answer /missing' } });
    expect(h.tunnelGets).toEqual([]);
  });

  it('reads through a login banner, marks parts after a cut as cut, and a body over its cap as too large', async () => {
    const cutAfterFirstBody = (out: Exec): Exec => {
      const at = out.stdout.indexOf('answer /b');
      return { ...out, stdout: `Welcome!\n${out.stdout.slice(0, at + 3)}`, truncated: true };
    };
    const h = host({ alter: cutAfterFirstBody });
    await h.collector.prepare();
    const [a, b, big] = await Promise.all([settle(h.get('/a')), settle(h.get('/b')), settle(h.get('/big', { maxBytes: 1000 }))]);
    expect(a).toEqual({ ok: true, v: { status: 200, text: 'answer /a' } });
    expect(b).toMatchObject({ ok: false, code: FleetErrorCode.COLLECTOR_CUT, message: expect.stringContaining('size cap') });
    expect(big).toMatchObject({ ok: false, code: FleetErrorCode.COLLECTOR_CUT });
    const h2 = host();
    await h2.collector.prepare();
    expect(await settle(h2.get('/big', { maxBytes: 1000 }))).toMatchObject({ ok: false, code: TelemetryErrorCode.BODY_TOO_LARGE });
  });

  it('falls back to tunnels after answers without frames (a forced command), says why, and probes again later', async () => {
    const h = host({ alter: (out) => ({ ...out, exitCode: 1, stdout: 'This account is restricted by rssh.\n' }) });
    await h.collector.prepare();
    for (let i = 0; i < 2; i++) expect(await settle(h.get('/metrics'))).toMatchObject({ ok: false, code: FleetErrorCode.COLLECTOR_NO_ANSWER });
    expect(h.collector.state()).toMatchObject({ mode: 'tunnels', reason: { code: FleetErrorCode.COLLECTOR_NO_ANSWER } });
    // now through the tunnel, as before the collector
    expect(await settle(h.get('/metrics'))).toEqual({ ok: true, v: { status: 200, text: 'tunnel /metrics' } });
    h.execs.length = 0;
    await h.collector.prepare();
    expect(h.execs).toEqual([]);
    h.clock.advance(5 * 60_000);
    await h.collector.prepare();
    expect(h.execs).toHaveLength(1);
    expect(h.collector.state().mode).toBe('collector');
  });

  it('stays on tunnels, with the reason, for a non-POSIX shell, no curl or an old curl', async () => {
    const cases: [string, RegExp][] = [
      ["fish: $((6*7)) is not supported. In fish, please use 'math 6*7'.\n", /POSIX/],
      ['gpu-console-probe 42 - /usr/bin/timeout \n', /curl is not installed/],
      ['gpu-console-probe 42 /usr/bin/curl - curl 7.19.7 (x86_64-redhat-linux-gnu)\n', /curl 7\.19\.7 is older than 7\.29/],
    ];
    for (const [probe, why] of cases) {
      const h = host({ probe });
      await h.collector.prepare();
      expect(h.collector.state()).toMatchObject({ mode: 'tunnels', reason: { code: FleetErrorCode.COLLECTOR_UNSUPPORTED, message: expect.stringMatching(why) } });
      expect(await settle(h.get('/x'))).toEqual({ ok: true, v: { status: 200, text: 'tunnel /x' } });
    }
  });

  it('reports a host clock minutes off, and probes afresh after a disconnect', async () => {
    const ahead = (out: Exec): Exec => ({ ...out, stdout: out.stdout.replace(/ T (\d+)\n/, (_, s: string) => ` T ${Number(s) + 600}\n`) });
    const h = host({ alter: ahead });
    await h.collector.prepare();
    expect(await settle(h.get('/a'))).toMatchObject({ ok: true });
    expect(h.collector.state().clockSkewS).toBeGreaterThanOrEqual(598);
    h.collector.onDisconnected();
    expect(h.collector.state().mode).toBe('probing');
    expect(await settle(h.get('/a'))).toEqual({ ok: true, v: { status: 200, text: 'tunnel /a' } });
  });
});
