import { describe, expect, it } from 'vitest';
import { runCommand, tokenize, type ExecHost } from '../../../src-main/demo/exec.js';

const host = (restarted: string[] = []): ExecHost => ({
  hostname: 'demo-1',
  bootMs: 0,
  nowMs: () => 3 * 86_400_000 + 5 * 60_000,
  samples: () => [],
  loadAverage: () => [0.5, 0.4, 0.3],
  restartCommands: [
    {
      tokens: tokenize('sudo systemctl restart vllm-gemma'),
      run: async () => {
        restarted.push('gemma');
        return { stdout: '', stderr: '', code: 0 };
      },
    },
  ],
});

describe('tokenize', () => {
  it('splits on whitespace and honours single and double quotes', () => {
    expect(tokenize(`nvidia-smi  --query-gpu='index, name' "--format=csv,noheader"`)).toEqual([
      'nvidia-smi',
      '--query-gpu=index, name',
      '--format=csv,noheader',
    ]);
    expect(tokenize(`echo "a \\"b\\" c" 'x"y' d\\ e ""`)).toEqual(['echo', 'a "b" c', 'x"y', 'd e', '']);
  });

  it('refuses unbalanced quotes and shell operators', () => {
    expect(() => tokenize(`echo 'oops`)).toThrow(/matching/);
    expect(() => tokenize('nvidia-smi | head')).toThrow(/not supported/);
  });
});

describe('runCommand', () => {
  it('answers unknown commands like bash', async () => {
    expect(await runCommand('rm -rf /', host())).toEqual({ stdout: '', stderr: 'bash: rm: command not found\n', code: 127 });
  });

  it('runs a restart command given verbatim (whitespace-insensitive) and nothing close to it', async () => {
    const restarted: string[] = [];
    const h = host(restarted);
    expect((await runCommand('sudo  systemctl restart vllm-gemma', h)).code).toBe(0);
    expect((await runCommand('sudo systemctl restart vllm-other', h)).code).toBe(127);
    expect(restarted).toEqual(['gemma']);
  });

  it('answers hostname, uptime and /proc/loadavg', async () => {
    expect((await runCommand('hostname', host())).stdout).toBe('demo-1\n');
    expect((await runCommand('uptime', host())).stdout).toMatch(/up 3 days, 0:05, {2}1 user, {2}load average: 0\.50, 0\.40, 0\.30/);
    expect((await runCommand('cat /proc/loadavg', host())).stdout).toMatch(/^0\.50 0\.40 0\.30 /);
  });
});
