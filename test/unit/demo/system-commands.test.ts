import { describe, expect, it } from 'vitest';
import { runCommand, type ExecHost } from '../../../src-main/demo/exec.js';
import { SSHD_T_AS_ROOT, SYSTEM_LISTENERS, runSs } from '../../../src-main/demo/system-commands.js';

const host = (ports: number[]): ExecHost => ({
  hostname: 'demo-1',
  bootMs: 0,
  nowMs: () => 0,
  samples: () => [],
  loadAverage: () => [0, 0, 0],
  restartCommands: [],
  serviceListeners: () => ports.map((port) => ({ address: '127.0.0.1', port, backlog: 2048 })),
});

describe('demo ss', () => {
  it('prints listeners as iproute2 6.x does: aligned under a header, or bare with -H', async () => {
    expect((await runCommand('ss -ltn', host([8000]))).stdout).toBe(
      [
        'State  Recv-Q Send-Q Local Address:Port Peer Address:PortProcess',
        'LISTEN 0      4096   127.0.0.53%lo:53        0.0.0.0:*          ',
        'LISTEN 0      4096      127.0.0.54:53        0.0.0.0:*          ',
        'LISTEN 0      128          0.0.0.0:22        0.0.0.0:*          ',
        'LISTEN 0      128             [::]:22           [::]:*          ',
        'LISTEN 0      2048       127.0.0.1:8000      0.0.0.0:*          ',
        '',
      ].join('\n'),
    );
    expect((await runCommand('ss -l -t -n -H', host([8000, 8001]))).stdout.split('\n').slice(4, 6)).toEqual([
      'LISTEN 0      2048       127.0.0.1:8000 0.0.0.0:*',
      'LISTEN 0      2048       127.0.0.1:8001 0.0.0.0:*',
    ]);
  });

  it('filters by family, names ports without -n, and refuses unknown options like ss', () => {
    expect(runSs(['-ltnH6'], SYSTEM_LISTENERS).stdout).toBe('LISTEN 0      128    [::]:22 [::]:*\n');
    expect(runSs(['-ltH'], SYSTEM_LISTENERS).stdout).toContain('0.0.0.0:ssh');
    expect(runSs(['-tnH'], SYSTEM_LISTENERS)).toEqual({ stdout: '', stderr: '', code: 0 });
    const bad = runSs(['-ltnQ'], SYSTEM_LISTENERS);
    expect(bad.code).toBe(255);
    expect(bad.stderr).toMatch(/^ss: invalid option -- 'Q'\nUsage: ss/);
  });

  it('shows no service port while the service is down', async () => {
    expect((await runCommand('ss -ltnH', host([]))).stdout).not.toContain(':8000');
  });
});

describe('demo sshd -T', () => {
  it('fails for the unprivileged user as OpenSSH does and answers through sudo -n', async () => {
    expect(await runCommand('sshd -T', host([]))).toEqual({ stdout: '', stderr: 'sshd: no hostkeys available -- exiting.\n', code: 1 });
    expect((await runCommand('/usr/sbin/sshd -T', host([]))).code).toBe(1);
    const root = await runCommand('sudo -n sshd -T', host([]));
    expect(root).toEqual(SSHD_T_AS_ROOT);
    expect(root.stdout).toMatch(/^passwordauthentication no$/m);
    expect(root.stdout).toMatch(/^permitrootlogin without-password$/m);
    // Other sudo lines are still unknown to the demo host.
    expect((await runCommand('sudo -n sshd -t', host([]))).code).toBe(127);
  });
});
