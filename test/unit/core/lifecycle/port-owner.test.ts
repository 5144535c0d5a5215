import { describe, expect, it } from 'vitest';
import { parseSsListeners, SS_COMMAND, type DriverIo, type LifecycleTargetConfig } from '../../../../src-main/core/lifecycle/index.js';
import { portOwnerCheck } from '../../../../src-main/core/lifecycle/drivers/port-owner.js';
import type { ExecResult } from '../../../../src-main/core/ssh/index.js';

// Who holds the service's port, from `ss -ltnp` as iproute2 prints it, and the
// restart's ghost check built on it: a fake exec answers each ss in turn.

const SS = `State  Recv-Q Send-Q Local Address:Port  Peer Address:PortProcess
LISTEN 0      4096   127.0.0.53%lo:53         0.0.0.0:*    users:(("systemd-resolve",pid=612,fd=14))
LISTEN 0      512          0.0.0.0:8080       0.0.0.0:*    users:(("llama-server",pid=1234,fd=3))
LISTEN 0      512             [::]:8080          [::]:*    users:(("llama-server",pid=1234,fd=4))
LISTEN 0      128          0.0.0.0:18080      0.0.0.0:*    users:(("python3",pid=55,fd=5),("python3",pid=56,fd=5))
LISTEN 0      128             [::]:22            [::]:*    users:(("sshd",pid=901,fd=4))
`;

const T: LifecycleTargetConfig = {
  label: 'strix', serviceId: 'llama', upstream: 'strix/llama', kind: 'llama-server', model: 'm', remoteHost: '127.0.0.1', remotePort: 8080,
  driver: 'llama-server', routerBaseUrl: null, restartCommand: 'sudo -n systemctl restart llama-server.service', sleepLevel: 1,
};

const ok = (stdout: string): ExecResult => ({ exitCode: 0, signal: null, stdout, stderr: '', truncated: false });
const line = (pid: number, name = 'llama-server', port = 8080) => `LISTEN 0 512 0.0.0.0:${port} 0.0.0.0:* users:(("${name}",pid=${pid},fd=3))\n`;

/** An io whose exec answers ss with each of `answers` in turn (the last one repeats). */
function io(...answers: ExecResult[]): DriverIo & { commands: string[] } {
  const commands: string[] = [];
  return {
    commands,
    http: () => Promise.reject(new Error('no http here')),
    exec(command) {
      commands.push(command);
      return Promise.resolve(answers.length > 1 ? answers.shift()! : answers[0]!);
    },
  };
}

async function check(target: LifecycleTargetConfig, x: DriverIo, sinceStepsMs = 5_000) {
  const c = portOwnerCheck(target);
  await c.before!(x, 1_000);
  return c.run(x, { timeoutMs: 1_000, sinceStepsMs, settleMs: 2_000 });
}

describe('ss -ltnp parsing', () => {
  it('picks the listeners on exactly that port (v4 and v6), one entry per pid; 18080 is not 8080', () => {
    expect(parseSsListeners(SS, 8080)).toEqual({ listening: true, holders: [{ pid: 1234, name: 'llama-server' }] });
    expect(parseSsListeners(SS, 18080).holders.map((h) => h.pid)).toEqual([55, 56]);
    expect(parseSsListeners(SS, 9999)).toEqual({ listening: false, holders: [] });
  });

  it('without the process column (not root), with -H, or with a Netid column', () => {
    expect(parseSsListeners('LISTEN 0 512 0.0.0.0:8080 0.0.0.0:*\n', 8080)).toEqual({ listening: true, holders: [] });
    expect(parseSsListeners('tcp   LISTEN 0 512 *:8080 *:* users:(("llama-server",pid=7,fd=3))\n', 8080).holders).toEqual([{ pid: 7, name: 'llama-server' }]);
    expect(parseSsListeners('', 8080).listening).toBe(false);
  });
});

describe('the ghost check of a restart', () => {
  it('a new pid on the port: ok, both named', async () => {
    const x = io(ok(SS), ok(line(4321)));
    expect(await check(T, x)).toEqual({ ok: true, line: 'port: :8080 was pid 1234 (llama-server), now pid 4321 (llama-server)' });
    expect(x.commands).toEqual([SS_COMMAND, SS_COMMAND]);
  });

  it('the same pid: waits out the settle time, then fatal LIFECYCLE_GHOST_PROCESS with pid, name, port and a hint', async () => {
    expect(await check(T, io(ok(SS)), 500)).toMatchObject({ ok: false, line: 'port: pid 1234 (llama-server) still holds :8080 right after the restart' });
    const r = await check(T, io(ok(SS)), 2_500);
    expect(r.ok).toBe(false);
    expect(r.fatal).toMatchObject({ code: 'LIFECYCLE_GHOST_PROCESS', details: { pid: 1234, process: 'llama-server', port: 8080, host: 'strix' } });
    expect(r.fatal!.message).toMatch(/^pid 1234 \(llama-server\) still holds port 8080 on strix after the restart.*`sudo kill 1234`.*`sudo fuser -k 8080\/tcp`/);
  });

  it('nothing listening yet after the restart: not yet ok (the new one has not bound)', async () => {
    expect(await check(T, io(ok(SS), ok('')))).toMatchObject({ ok: false, line: 'port: nothing listens on :8080 yet (before the restart: pid 1234 (llama-server))' });
  });

  it('said, not failed: no ss, ss refusing -p, no pid shown, nothing before, a docker-proxy, a service on another machine', async () => {
    const missing: ExecResult = { exitCode: 127, signal: null, stdout: '', stderr: 'bash: ss: command not found\n', truncated: false };
    expect(await check(T, io(missing))).toEqual({ ok: true, line: 'port: ss is not installed on strix; old and new process not compared' });
    const old: ExecResult = { exitCode: 255, signal: null, stdout: '', stderr: "ss: invalid option -- 'p'\n", truncated: false };
    expect((await check(T, io(old))).line).toBe("port: `ss -ltnp` exited 255: ss: invalid option -- 'p'; old and new process not compared");
    expect((await check(T, io(ok('LISTEN 0 512 0.0.0.0:8080 0.0.0.0:*\n')))).line).toMatch(/listener on :8080 but not its process \(ss shows other users' processes only to root\)/);
    expect((await check(T, io(ok(line(1, 'sshd', 22)))))).toEqual({ ok: true, line: 'port: nothing listened on :8080 before the restart; nothing to compare' });
    expect((await check(T, io(ok(line(88, 'docker-proxy')))))).toMatchObject({ ok: true, line: expect.stringMatching(/held by pid 88 \(docker-proxy\), the container runtime's port proxy/) as string });
    const remote = io(ok(SS));
    expect((await check({ ...T, remoteHost: '10.0.0.5' }, remote)).line).toMatch(/the service is at 10\.0\.0\.5, not on strix itself/);
    expect(remote.commands).toEqual([]);
  });
});
