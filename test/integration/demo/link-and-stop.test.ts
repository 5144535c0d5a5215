import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ssh2 from 'ssh2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDemoFault, startDemoFleet, syntheticProfiles, type DemoFleet } from '../../../src-main/demo/index.js';
import { connectSsh, exec, http } from './demo-client.js';

// The demo's two faults for the fleet overview (issue #34, "make the demo able
// to do both"): a cut link (SSH sessions reset, new connections never answered,
// as a dropped route looks from the console) and a stopped server (down and
// refusing until restarted), each reversible, on one host only.

let dir: string;
let fleet: DemoFleet;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'demo-link-'));
  fleet = await startDemoFleet({ dir, profiles: syntheticProfiles(2, { gpusPerHost: 2, servicesPerHost: 2, labelPrefix: 'lk' }), timeScale: 1000 });
}, 60_000);

afterAll(async () => {
  await fleet?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

const closed = (client: Awaited<ReturnType<typeof connectSsh>>) => new Promise<void>((resolve) => client.once('close', () => resolve()));

describe('demo link cut and stopped server', () => {
  it('a cut link resets the sessions up and leaves new ones unanswered; the other host is untouched; restored, SSH works again', async () => {
    const a = fleet.host('lk-001');
    const up = await connectSsh(fleet, a);
    const other = await connectSsh(fleet, fleet.host('lk-002'));
    const gone = closed(up);
    a.setLinkCut(true);
    await gone;
    const t0 = Date.now();
    const attempt = new Promise<string>((resolve) => {
      const c = new ssh2.Client();
      c.on('ready', () => resolve('connected'));
      c.on('error', (err: Error) => resolve(err.message)); // every error heard: a cut link may raise more than one
      c.connect({ host: '127.0.0.1', port: a.sshPort, username: 'ops', privateKey: readFileSync(fleet.clientKeyFile), readyTimeout: 10_000 });
    });
    // The client's own timeout is 10 s; a black hole answers nothing before it.
    const early = await Promise.race([attempt, new Promise((r) => setTimeout(() => r('still waiting'), 1_500))]);
    expect(early).toBe('still waiting');
    expect((await exec(other, 'echo ok')).stdout.trim()).toBe('ok');
    a.setLinkCut(false);
    expect(await attempt).toMatch(/closed|reset|ECONNRESET|Timed out|handshake/i);
    expect(Date.now() - t0).toBeLessThan(12_000);
    const again = await connectSsh(fleet, a);
    expect((await exec(again, 'echo back')).stdout.trim()).toBe('back');
    again.end();
    other.end();
  }, 30_000);

  it('a stopped server refuses until restarted; the host and its other service stay up', async () => {
    const h = fleet.host('lk-002');
    const client = await connectSsh(fleet, h);
    const [vllm, llama] = fleet.config.hosts[1]!.services;
    expect((await http(client, vllm!.remotePort, 'GET', '/health')).status).toBe(200);
    h.stopService(vllm!.id);
    await expect(http(client, vllm!.remotePort, 'GET', '/health')).rejects.toThrow();
    expect((await http(client, llama!.remotePort, 'GET', '/health')).status).toBe(200);
    h.restartService(vllm!.id);
    const deadline = Date.now() + 10_000;
    let status = 0;
    while (Date.now() < deadline && status !== 200) {
      status = await http(client, vllm!.remotePort, 'GET', '/health').then(
        (r) => r.status,
        () => 0,
      );
      if (status !== 200) await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe(200);
    expect(() => h.stopService('nope')).toThrow(/no model service "nope"/);
    client.end();
  }, 30_000);

  it('as start-up faults: HOST:link-cut and HOST:stopped@SERVICE, nothing else after them', () => {
    expect(parseDemoFault('demo-017:link-cut')).toEqual({ host: 'demo-017', kind: 'link-cut' });
    expect(parseDemoFault('demo-040:stopped@svc0')).toEqual({ host: 'demo-040', kind: 'stopped', serviceId: 'svc0' });
    expect(() => parseDemoFault('demo-017:link-cut@svc0')).toThrow(/link-cut takes no value or target/);
    expect(() => parseDemoFault('demo-040:stopped')).toThrow(/stopped needs @SERVICE/);
  });

  it('synthetic hosts carry region and rack tags into their config', () => {
    expect(fleet.config.hosts.map((h) => h.tags)).toEqual([
      { region: 'kl', rack: 'r1' },
      { region: 'kl', rack: 'r1' },
    ]);
  });
});
