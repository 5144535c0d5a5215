import { execFileSync, spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  COLLECTOR_PREAMBLE,
  COLLECTOR_PROBE,
  collectorScript,
  curlRecentEnough,
  endpointUrl,
  parseCollectorAnswer,
  parseProbe,
} from '../../../../src-main/core/fleet/collector-script.js';
import { DEMO_COLLECTOR_PREAMBLE, DEMO_COLLECTOR_PROBE } from '../../../../src-main/demo/collector.js';

// The collector's words: the script runs under a real dash (what /bin/sh is on
// Debian and Ubuntu hosts) against a loopback HTTP server, and its framed answer
// is read back by the boundary, whatever surrounds or cuts it.

const B = 'GCBtest0123';
let server: Server;
let port: number;

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/hang') return;
    if (req.url === '/health') {
      res.writeHead(503);
      res.end('{"error":{"message":"Loading model"}}');
      return;
    }
    res.writeHead(200);
    // no final newline, and a line that looks like a frame of another run
    res.end(`# HELP x\nx 1\nGCBother } 200 3 0.1\nbody of ${req.url}`);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

function runSh(script: string, env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return new Promise((resolve, reject) => {
    const p = spawn('dash', ['-c', script], { stdio: ['ignore', 'pipe', 'pipe'], env });
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.on('error', reject);
    p.on('close', () => resolve(out));
  });
}

describe('collector script under dash', () => {
  it('frames each command (stdout, exit status, stderr apart) and each URL (status, body byte for byte, per-URL deadline)', async () => {
    const script = collectorScript({
      boundary: B,
      execs: [
        { name: 'x0', command: `echo out; echo "it's" >&2; exit 3`, timeoutMs: 2000 },
        { name: 'x1', command: "printf 'no newline'", timeoutMs: 2000 },
      ],
      urls: [{ url: endpointUrl('127.0.0.1', port, '/metrics') }, { url: endpointUrl('127.0.0.1', port, '/hang') }, { url: endpointUrl('127.0.0.1', port, '/health') }, { url: endpointUrl('127.0.0.1', 1, '/refused?model=a[1]') }],
      httpTimeoutMs: 700,
      useTimeout: true,
    });
    const started = Date.now();
    const a = parseCollectorAnswer(await runSh(script), B);
    // one hung endpoint costs its own deadline, not the others'
    expect(Date.now() - started).toBeLessThan(3000);
    expect(a.framed && a.complete).toBe(true);
    expect(Math.abs(a.hostTimeS! - Date.now() / 1000)).toBeLessThan(5);
    expect(a.execs.get('x0')).toEqual({ stdout: 'out\n', exitCode: 3, stderr: "it's" });
    expect(a.execs.get('x1')).toEqual({ stdout: 'no newline', exitCode: 0, stderr: '' });
    expect(a.https.map((h) => h.status)).toEqual([200, 0, 503, 0]);
    expect(a.https[0]!.body).toBe('# HELP x\nx 1\nGCBother } 200 3 0.1\nbody of /metrics');
    expect(a.https[0]!.sizeBytes).toBe(Buffer.byteLength(a.https[0]!.body));
    expect(a.https[1]!.seconds).toBeGreaterThanOrEqual(0.69);
    expect(a.https[2]!.body).toContain('Loading model');
    expect(a.curl?.stderr).toMatch(/curl: \(28\)[^\n]*\ncurl: \(7\)/);
  });

  it('ignores a banner before and after the frames, and reads a cut answer as far as it got', async () => {
    const script = collectorScript({ boundary: B, execs: [{ name: 'x0', command: 'echo gpu', timeoutMs: 1000 }], urls: [{ url: endpointUrl('127.0.0.1', port, '/a') }, { url: endpointUrl('127.0.0.1', port, '/b') }], httpTimeoutMs: 2000, useTimeout: false });
    const out = await runSh(script);
    const banner = `Welcome to Ubuntu 22.04\n * Documentation: https://help.ubuntu.com\n${out}logout\n`;
    const whole = parseCollectorAnswer(banner, B);
    expect(whole.execs.get('x0')?.stdout).toBe('gpu\n');
    expect(whole.https.map((h) => h.body.endsWith('/a') || h.body.endsWith('/b'))).toEqual([true, true]);
    const cutAt = out.indexOf('body of /b') + 4;
    const cut = parseCollectorAnswer(out.slice(0, cutAt), B);
    expect(cut.complete).toBe(false);
    expect(cut.execs.get('x0')?.stdout).toBe('gpu\n');
    expect(cut.https).toHaveLength(1);
    expect(cut.curl).toBeNull();
    // another run's boundary is no frame of this one
    expect(parseCollectorAnswer(out, 'GCBsomethingelse').framed).toBe(false);
  });

  it("ignores the login's http_proxy and ~/.curlrc", async () => {
    const home = mkdtempSync(join(tmpdir(), 'gc-curlrc-'));
    writeFileSync(join(home, '.curlrc'), 'write-out = "junk"\noutput = "/dev/null"\n');
    try {
      const script = collectorScript({ boundary: B, execs: [], urls: [{ url: endpointUrl('127.0.0.1', port, '/metrics') }], httpTimeoutMs: 2000, useTimeout: false });
      const a = parseCollectorAnswer(await runSh(script, { ...process.env, HOME: home, http_proxy: 'http://127.0.0.1:1', HTTP_PROXY: 'http://127.0.0.1:1', no_proxy: '' }), B);
      expect(a.https.map((h) => [h.status, h.body.endsWith('body of /metrics')])).toEqual([[200, true]]);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it('keeps a configured host with quotes and an IPv6 literal as data, never as shell words', () => {
    expect(endpointUrl('::1', 8000, '/metrics')).toBe('http://[::1]:8000/metrics');
    const script = collectorScript({ boundary: B, execs: [], urls: [{ url: "http://x';touch /tmp/p;'/" }], httpTimeoutMs: 1000, useTimeout: false });
    expect(script).toContain(`'http://x'\\'';touch /tmp/p;'\\''/'`);
  });
});

describe('collector probe', () => {
  it('is POSIX sh with curl and timeout on this machine (dash)', () => {
    const p = parseProbe(execFileSync('dash', ['-c', COLLECTOR_PROBE], { encoding: 'utf8' }));
    expect(p.posix).toBe(true);
    expect(p.curl).toMatch(/curl$/);
    expect(p.timeout).toBe(true);
    expect(curlRecentEnough(p.curlVersion)).toBe(true);
  });

  it('says no for other shells, a forced command, no curl, an old curl', () => {
    expect(parseProbe('fish: $((6*7)) is not supported. In fish, please use \'math 6*7\'.\n').posix).toBe(false);
    expect(parseProbe('Illegal variable name.\n').posix).toBe(false);
    expect(parseProbe('This account is restricted to backups.\n').posix).toBe(false);
    expect(parseProbe('Last login: today\ngpu-console-probe 42 - /usr/bin/timeout \n')).toEqual({ posix: true, curl: null, curlVersion: null, timeout: true });
    const old = parseProbe('gpu-console-probe 42 /usr/bin/curl - curl 7.19.7 (x86_64-redhat-linux-gnu) libcurl/7.19.7\n');
    expect(old).toMatchObject({ posix: true, curl: '/usr/bin/curl', timeout: false, curlVersion: '7.19.7' });
    expect(curlRecentEnough(old.curlVersion)).toBe(false);
    expect(curlRecentEnough('8.5.0')).toBe(true);
  });
});

describe('the demo answers the same words', () => {
  it("holds the console's probe and preamble verbatim (a change on either side fails here)", () => {
    expect(DEMO_COLLECTOR_PROBE).toBe(COLLECTOR_PROBE);
    expect(DEMO_COLLECTOR_PREAMBLE).toBe(COLLECTOR_PREAMBLE);
  });
});
