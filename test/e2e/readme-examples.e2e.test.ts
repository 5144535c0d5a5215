import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, CLI, startConsole } from '../helpers/console-process.js';
import { ROOT } from '../helpers/imports.js';
import { parseConfig } from '../../src-main/core/config/index.js';
import { chooseTransport } from '../../src-main/core/ssh/index.js';

// The README's examples, run as written: a reader who copies them gets what
// the README says (the blocks are found by their `readme-example` markers).

const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** The fenced block right after `<!-- readme-example: NAME -->`. */
function example(name: string): string {
  const marker = `<!-- readme-example: ${name} -->`;
  const at = README.indexOf(marker);
  if (at < 0) throw new Error(`README has no ${marker}`);
  const m = /```[a-z]*\n([\s\S]*?)```/.exec(README.slice(at + marker.length));
  if (!m) throw new Error(`no fenced block after ${marker}`);
  return m[1]!;
}

function run(cmd: string, args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const dirs: string[] = [];
const tmp = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'gc-readme-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('README examples', () => {
  beforeAll(() => assertBuilt());

  it('the config error example prints exactly the message the README shows', async () => {
    const dir = tmp();
    writeFileSync(join(dir, 'config.yaml'), example('config-error input'));
    const r = await run(process.execPath, [CLI, 'config', 'check', 'config.yaml'], { cwd: dir });
    expect(r.code).toBe(1);
    // The README writes the folder the file is in as /path/to/.
    expect(`${r.stdout}${r.stderr}`.trim().replace(`${dir}/`, '/path/to/')).toBe(example('config-error output').trim());
  });

  it('the SSH transports example is a valid config: certificate and two hops go to openssh, the config alias too', async () => {
    const dir = tmp();
    writeFileSync(join(dir, 'config.yaml'), example('ssh-transports'));
    const r = await run(process.execPath, [CLI, 'config', 'check', 'config.yaml'], { cwd: dir });
    expect(`${r.stdout}${r.stderr}`).toMatch(/OK \(2 hosts, 0 services\)/);
    expect(r.code).toBe(0);
    const config = parseConfig(example('ssh-transports'), { file: 'config.yaml', home: '/home/ops' });
    expect(config.hosts.map((h) => chooseTransport(h.ssh, config.ssh.transport).kind)).toEqual(['openssh', 'openssh']);
  });

  it('the standalone bench example runs against the demo console through its proxy and prints both levels', async () => {
    const dataDir = tmp();
    const c = await startConsole(['--demo', '--demo-traffic', 'off', '--data-dir', dataDir]);
    try {
      const started = Date.now();
      const r = await run('bash', ['-euo', 'pipefail', '-c', example('bench-run')], { cwd: ROOT, env: { GPU_CONSOLE_DATA_DIR: dataDir } });
      const seconds = (Date.now() - started) / 1000;
      expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
      // The table has a row per concurrency level of the scenario (4 requests each), none failed.
      expect(r.stdout).toMatch(/^\| concurrency 1 \| 4 \|/m);
      expect(r.stdout).toMatch(/^\| concurrency 2 \| 4 \|/m);
      expect(r.stdout).toContain('Model Qwen3.6-27B-FP8');
      expect(r.stderr).toContain('8 settled, 0 failed');
      expect(seconds, 'the README promises well under a minute').toBeLessThan(60);
    } finally {
      await c.stop();
    }
  }, 120_000);
});
