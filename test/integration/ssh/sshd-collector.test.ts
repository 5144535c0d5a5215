import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HostView } from '../../../src-preload/contract/index.js';
import type { FleetService } from '../../../src-main/core/fleet/index.js';
import { createLogger } from '../../../src-main/core/base/index.js';
import { ROOT } from '../../helpers/imports.js';
import { createNetnsHost, knownHostsLine, preClean, type NetnsHost } from '../../helpers/netns-sshd.js';
import { freePort, HAVE_OPENSSH } from '../../helpers/ssh-tools.js';
import { waitForLine } from '../../helpers/sshd.js';
import { startFleet, waitHost } from './helpers.js';

// The collector's choice on a real OpenSSH sshd in a network namespace (issue
// #31 "Done when"): the same machine reached twice, once by a login whose PATH
// has curl (→ read by one command a poll) and once by a login whose PATH has
// everything but curl (→ read through the tunnels, saying curl is missing). A
// vLLM-like server bound to 127.0.0.1 inside the namespace serves the same
// /metrics bytes to both, so the figures must agree whichever path read them.

let ns: NetnsHost;
let fleet: FleetService;
let server: ChildProcess;
/** The fleet's log lines about the resident collector (which host opened one, which broke). */
const residentLines: string[] = [];

/** A PATH folder with every command of this machine except curl (links, nothing copied). */
function pathWithoutCurl(dir: string): string {
  const bin = join(dir, 'bin-no-curl');
  mkdirSync(bin);
  for (const from of ['/usr/bin', '/usr/sbin']) {
    for (const name of readdirSync(from)) {
      if (name === 'curl') continue;
      try {
        symlinkSync(join(from, name), join(bin, name));
      } catch {
        // the same name in both folders: the first stays
      }
    }
  }
  return bin;
}

beforeAll(async () => {
  preClean();
  ns = await createNetnsHost();
  const withCurl = await ns.startSshd({ logLevel: 'INFO' });
  const noCurl = await ns.startSshd({ logLevel: 'INFO', port: 2222, sessionEnv: { PATH: pathWithoutCurl(ns.dir) } });
  // A login whose every command is replaced (a restricted account): the probe's answer never comes.
  const forced = await ns.startSshd({ logLevel: 'INFO', port: 2223, extraConfig: ['ForceCommand echo This account is restricted to port forwarding'] });
  server = spawn('ip', ['netns', 'exec', ns.ns, process.execPath, resolve(ROOT, 'test/fixtures/ssh/vllm-like-server.mjs'), '8000', resolve(ROOT, 'test/fixtures/vllm/vllm-0.11.x.txt')], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await waitForLine(server, /listening/, 10_000, 'vllm-like server in the namespace');
  const kh = join(ns.dir, 'known_hosts');
  writeFileSync(kh, `${knownHostsLine(withCurl)}\n${knownHostsLine(noCurl)}\n${knownHostsLine(forced)}\n`);
  const host = (label: string, port: number, localPort: number, transport: 'builtin' | 'openssh' = 'builtin') => ({
    label,
    ssh: { host: ns.addr, port, user: 'root', identityFile: ns.clientKey, transport },
    knownHostsFile: kh,
    telemetry: { gpu: 'none' as const },
    services: [{ id: 'm', kind: 'vllm' as const, remotePort: 8000, localPort, model: 'test-model' }],
  });
  const hosts = [host('with-curl', 22, await freePort()), host('no-curl', 2222, await freePort()), host('forced', 2223, await freePort())];
  if (HAVE_OPENSSH) hosts.push(host('with-curl-openssh', 22, await freePort(), 'openssh'));
  const logger = createLogger({ level: 'debug', write: (line) => void (/resident collector/.test(line) && residentLines.push(line)) });
  fleet = startFleet(hosts, { pollIntervalMs: 500, logger }).fleet;
}, 40_000);

afterAll(async () => {
  await fleet?.dispose();
  server?.kill('SIGKILL');
  await ns?.dispose();
});

const read = (h: HostView) => h.read?.mode !== 'probing' && h.services[0]!.source?.atMs != null && !h.services[0]!.stale && h.services[0]!.health === 'ok';

describe('the collector on a real sshd', () => {
  it('reads a host with curl by one command a poll, and one without curl through tunnels, saying why', async () => {
    const a = await waitHost(fleet, 'with-curl', read, 20_000);
    const b = await waitHost(fleet, 'no-curl', read, 20_000);
    expect(a.read).toMatchObject({ mode: 'collector', reason: null });
    expect(b.read).toMatchObject({ mode: 'tunnels', reason: expect.stringMatching(/^FLEET_COLLECTOR_UNSUPPORTED: curl is not installed/) });
    // The same bytes read both ways give the same figures.
    const figures = (h: HostView) => {
      const s = h.services[0]!;
      return { kv: s.kvCachePct, running: s.requestsRunning, waiting: s.requestsWaiting, version: s.version, prefix: s.prefixHitPct, engines: s.engines, sleep: s.sleep };
    };
    expect(figures(a)).toEqual(figures(b));
    expect(figures(a).kv).not.toBeNull();
    expect(figures(a).version).toBe('0.11.0');
    // Host health is read on the collector's host too (its figures-only rounds ride the poll's one exec).
    const health = await waitHost(fleet, 'with-curl', (h) => h.health?.memTotalBytes != null, 20_000);
    expect(health.health!.memTotalBytes!).toBeGreaterThan(0);
  }, 60_000);

  it('keeps one resident shell open on the builtin transport: polls are request lines on it, none of them breaks it', async () => {
    const opened = (host: string) => residentLines.filter((l) => l.includes('resident collector open') && l.includes(`"host":"${host}"`));
    await waitHost(fleet, 'with-curl', () => opened('with-curl').length > 0, 20_000);
    // A few more polls (500 ms each) read through it; the figures stay current.
    let ticks = 0;
    const h = await waitHost(fleet, 'with-curl', (v) => read(v) && ++ticks > 6, 20_000);
    expect(h.read).toMatchObject({ mode: 'collector', reason: null });
    expect(residentLines.filter((l) => l.includes('resident collector failed') && l.includes('"host":"with-curl"'))).toEqual([]);
    // Opened again only when the command table grew (the GPU-less host's table is small), not per poll.
    expect(opened('with-curl').length).toBeLessThanOrEqual(3);
  }, 40_000);

  it('reads a login with a forced command through tunnels, saying its shell did not answer as POSIX sh', async () => {
    const f = await waitHost(fleet, 'forced', read, 20_000);
    expect(f.read).toMatchObject({ mode: 'tunnels', reason: expect.stringMatching(/^FLEET_COLLECTOR_UNSUPPORTED: .*POSIX sh/) });
    expect(f.services[0]!.kvCachePct).not.toBeNull();
  }, 30_000);

  it.skipIf(!HAVE_OPENSSH)('stays resident on the OpenSSH transport too: its stream is an ssh mux client whose stdin reaches the loop', async () => {
    const opened = (host: string) => residentLines.filter((l) => l.includes('resident collector open') && l.includes(`"host":"${host}"`));
    await waitHost(fleet, 'with-curl-openssh', () => opened('with-curl-openssh').length > 0, 30_000);
    let ticks = 0;
    const c = await waitHost(fleet, 'with-curl-openssh', (h) => read(h) && ++ticks > 6, 20_000);
    expect(c.read).toMatchObject({ mode: 'collector', reason: null });
    expect(c.services[0]!.kvCachePct).not.toBeNull();
    expect(residentLines.filter((l) => l.includes('resident collector failed') && l.includes('"host":"with-curl-openssh"'))).toEqual([]);
    expect(opened('with-curl-openssh').length).toBeLessThanOrEqual(3);
  }, 60_000);
});
