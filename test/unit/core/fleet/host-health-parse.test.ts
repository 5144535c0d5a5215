import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HEALTH_SCRIPT, PROCESS_CAP, healthCommand } from '../../../../src-main/core/fleet/host-health-command.js';
import { parseDfSection, parseFdinfo, parseHealthOutput, parseListeners, parseProcesses, type HealthIssue } from '../../../../src-main/core/fleet/host-health-parse.js';

const FIXTURES = join(__dirname, '../../../fixtures/host-health');

describe('the health command', () => {
  it('is one literal script; every configured value is a quoted argument, ~ expanded by the host, $(…) never run', () => {
    const evil = "/tmp/x'; touch /tmp/pwned-$(id -u) #";
    const cmd = healthCommand({ mode: 'full', gpuVendor: 'amd', cacheSizeTimeoutS: 5, modelCache: ['~/models', evil], dockerRoot: '/var/lib/docker', kernelLog: 'off', kernelLogSinceS: null });
    expect(cmd.startsWith("sh -c '")).toBe(true);
    expect(cmd).toContain(HEALTH_SCRIPT.slice(0, 40));
    // Run by a real sh: the paths come back as df's section heads, literally; ~ became $HOME.
    const out = execFileSync('sh', ['-c', cmd], { encoding: 'utf8', env: { ...process.env, HOME: '/home/ops-test' } });
    expect(out).toContain('@df cache /home/ops-test/models\n');
    expect(out).toContain(`@df cache ${evil}\n`);
    expect(out).toContain('@df docker /var/lib/docker\n');
    expect(out.trimEnd().endsWith('@end')).toBe(true);
  });

  it('fast rounds neither ask Docker nor run du', () => {
    const cmd = healthCommand({ mode: 'fast', gpuVendor: 'nvidia', cacheSizeTimeoutS: 5, modelCache: ['/tmp'], dockerRoot: null, kernelLog: 'off', kernelLogSinceS: null });
    const out = execFileSync('sh', ['-c', cmd], { encoding: 'utf8' });
    expect(out).not.toMatch(/^@(du|docker_root|docker_error|drm|fdinfo)/m);
    const parsed = parseHealthOutput(out)!;
    expect(parsed.cacheSizes).toBeNull();
    expect(parsed.docker).toBeNull();
  });
});

describe('parseHealthOutput on a real answer (Debian 12 VM)', () => {
  const text = readFileSync(join(FIXTURES, 'debian12-vm.full.txt'), 'utf8');
  const h = parseHealthOutput(text)!;

  it('reads every figure, none made up', () => {
    expect(h.complete).toBe(true);
    expect(h).toMatchObject({
      bootId: '7d1c467f-343e-4a6c-bc22-2432f86f0b1e',
      uptimeS: 19002.83,
      load1: 5.11,
      load5: 6.67,
      load15: 6.66,
      cpuCount: 2,
      memTotalBytes: 24683748 * 1024,
      memAvailableBytes: 23875608 * 1024,
      swapTotalBytes: 0,
      swapFreeBytes: 0,
    });
    expect(h.disks[0]).toEqual({ kind: 'root', path: '/', filesystem: '/dev/vda', mount: '/', totalBytes: 270553174016, usedBytes: 26506285056, freeBytes: 82438008832, error: null });
    expect(h.disks[1]).toMatchObject({ kind: 'cache', path: '/root/.cache', freeBytes: 82438008832, error: null });
    expect(h.cacheSizes).toEqual([{ path: '/root/.cache', bytes: 8194, error: null }]);
    expect(h.docker).toEqual({ rootDir: null, why: 'docker info failed without saying why' });
    expect(h.listeners!.length).toBeGreaterThan(5);
    expect(h.processes!.find((p) => p.pid === 1)).toMatchObject({ ppid: 0, user: 'root' });
  });

  it("a missing path is FLEET_HEALTH_PATH_MISSING with df's own words; its figures null, never 0", () => {
    const missing = h.disks[2]!;
    expect(missing).toMatchObject({ kind: 'cache', totalBytes: null, freeBytes: null, usedBytes: null });
    expect(missing.error?.code).toBe('FLEET_HEALTH_PATH_MISSING');
    expect(missing.error?.message).toContain('No such file or directory');
  });
});

describe('strict parts', () => {
  it('a df line of an unexpected shape is FLEET_HEALTH_DF_UNEXPECTED naming the line; the rest of the reading is used', () => {
    const text = [
      '@v 1',
      '@loadavg 0.50 0.40 0.30 1/100 42',
      '@df root /',
      'Filesystem         1-blocks        Used   Available Capacity Mounted on',
      '/dev/sda1 lots 12 34 5% /',
      '@df cache /srv/models',
      'Filesystem     1K-blocks  Used Available Use% Mounted on',
      '/dev/sdb 100 50 50 50% /srv',
      '@end',
    ].join('\n');
    const h = parseHealthOutput(text)!;
    expect(h.load1).toBe(0.5);
    expect(h.disks[0]!.error).toEqual({ code: 'FLEET_HEALTH_DF_UNEXPECTED', message: 'df -PB1 /: unexpected line "/dev/sda1 lots 12 34 5% /"' });
    expect(h.disks[0]!.freeBytes).toBeNull();
    // df without -B1 (1K blocks): a header the console does not take — not read as bytes.
    expect(h.disks[1]!.error?.code).toBe('FLEET_HEALTH_DF_UNEXPECTED');
    expect(h.disks[1]!.error?.message).toContain('Filesystem     1K-blocks');
  });

  it('a mount point with spaces and a long device name on one line (-P)', () => {
    const d = parseDfSection('cache', '/mnt/model cache', [
      'Filesystem                                 1-blocks         Used    Available Capacity Mounted on',
      '/dev/mapper/ubuntu--vg-ubuntu--lv 1967317819392 1959266504704 8051314688     100% /mnt/model cache',
    ]);
    expect(d).toMatchObject({ mount: '/mnt/model cache', freeBytes: 8051314688, totalBytes: 1967317819392, error: null });
  });

  it('meminfo: a missing key stays null; an odd line is said', () => {
    const h = parseHealthOutput(['@v 1', '@meminfo', 'MemTotal:       65536000 kB', 'Garbage here', '@end'].join('\n'))!;
    expect(h.memTotalBytes).toBe(65536000 * 1024);
    expect(h.memAvailableBytes).toBeNull();
    expect(h.issues).toEqual([{ code: 'FLEET_HEALTH_UNPARSEABLE', message: '/proc/meminfo: unexpected line "Garbage here"' }]);
  });

  it('a cut answer (no @end) is incomplete; not the health command at all is null', () => {
    expect(parseHealthOutput('@v 1\n@loadavg 1.00 1.00 1.00 1/1 1\n')!.complete).toBe(false);
    expect(parseHealthOutput('bash: sh: command not found\n')).toBeNull();
  });

  it("docker not permitted: docker's own first line is the reason", () => {
    const line = 'permission denied while trying to connect to the Docker daemon socket at unix:///var/run/docker.sock: Get "http://%2Fvar%2Frun%2Fdocker.sock/v1.24/info": dial unix /var/run/docker.sock: connect: permission denied';
    const h = parseHealthOutput(['@v 1', `@docker_error ${line}`, '@end'].join('\n'))!;
    expect(h.docker).toEqual({ rootDir: null, why: `${line.slice(0, 160)}…` });
    expect(parseHealthOutput('@v 1\n@docker_root /mnt/docker-data\n@end\n')!.docker).toEqual({ rootDir: '/mnt/docker-data', why: null });
  });

  it('a du past its deadline is unknown, not 0', () => {
    const h = parseHealthOutput(['@v 1', '@du 124  /srv/hf', '@end'].join('\n'))!;
    expect(h.cacheSizes).toEqual([{ path: '/srv/hf', bytes: null, error: { code: 'FLEET_HEALTH_CACHE_SIZE_UNKNOWN', message: '/srv/hf: du did not finish within its deadline' } }]);
  });

  it('a process list of 10,000 entries is read up to the cap and says so', () => {
    const lines = Array.from({ length: 10_000 }, (_, i) => `${i + 2} 1 ops                              python3`);
    const issues: HealthIssue[] = [];
    const rows = parseProcesses(lines, issues);
    expect(rows).toHaveLength(PROCESS_CAP);
    expect(issues.map((i) => i.code)).toEqual(['FLEET_HEALTH_LIST_CAPPED']);
    // A comm with spaces stays whole.
    expect(parseProcesses(['  812     1 root     tmux: server'], [])[0]).toEqual({ pid: 812, ppid: 1, user: 'root', comm: 'tmux: server' });
  });

  it('ss -ltnpH: every listener with its processes; one the user may not see has none', () => {
    const ls = parseListeners([
      'LISTEN 0      2048       127.0.0.1:8000       0.0.0.0:*    users:(("python3",pid=4100,fd=27))',
      'LISTEN 0      4096   127.0.0.53%lo:53         0.0.0.0:*',
      'LISTEN 0      512        127.0.0.1:8080       0.0.0.0:*    users:(("llama-server",pid=812,fd=3),("llama-server",pid=4812,fd=3))',
      'LISTEN 0      128             [::]:22            [::]:*',
    ]);
    expect(ls).toEqual([
      { address: '127.0.0.1', port: 8000, holders: [{ pid: 4100, name: 'python3' }] },
      { address: '127.0.0.53%lo', port: 53, holders: [] },
      { address: '127.0.0.1', port: 8080, holders: [{ pid: 812, name: 'llama-server' }, { pid: 4812, name: 'llama-server' }] },
      { address: '[::]', port: 22, holders: [] },
    ]);
  });

  it('AMD fdinfo: VRAM + GTT per DRM client, a client shared by two fds counted once', () => {
    const issues: HealthIssue[] = [];
    const rows = parseFdinfo(
      [
        '/proc/3100/fdinfo/7:drm-client-id:\t18',
        '/proc/3100/fdinfo/7:drm-pdev:\t0000:c3:00.0',
        '/proc/3100/fdinfo/7:drm-memory-vram:\t524288 KiB',
        '/proc/3100/fdinfo/7:drm-memory-gtt:\t52428800 KiB',
        // the same client through a dup'ed fd
        '/proc/3100/fdinfo/9:drm-client-id:\t18',
        '/proc/3100/fdinfo/9:drm-pdev:\t0000:c3:00.0',
        '/proc/3100/fdinfo/9:drm-memory-vram:\t524288 KiB',
        '/proc/3100/fdinfo/9:drm-memory-gtt:\t52428800 KiB',
        // a compositor's client without memory lines is no GPU memory holder
        '/proc/900/fdinfo/4:drm-client-id:\t3',
        '/proc/900/fdinfo/4:drm-pdev:\t0000:c3:00.0',
        'capped',
      ],
      issues,
    );
    expect(rows).toEqual([{ pid: 3100, pdev: '0000:c3:00.0', clientId: '18', vramBytes: (524288 + 52428800) * 1024 }]);
    expect(issues.map((i) => i.code)).toEqual(['FLEET_HEALTH_LIST_CAPPED']);
  });
});
