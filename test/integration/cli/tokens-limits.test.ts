import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { proxyCommands } from '../../../src-main/cli/extra/proxy.js';
import { createOutput } from '../../../src-main/cli/output.js';
import { TokenLimitErrorCode, type TokenView } from '../../../src-preload/contract/index.js';

// `gpu-console tokens create / set / list` with limits, round trip through the contract to a core started
// for each command on a data dir (no console running): what create stores, set changes and list shows;
// a config-owned field is refused with its code and nothing changes.

const dir = mkdtempSync(join(tmpdir(), 'gc-cli-limits-'));
writeFileSync(
  join(dir, 'config.yaml'),
  `hosts:
  - label: gpu-a
    pricePerHourUsd: 2
    ssh: { host: 127.0.0.1, user: x, agent: true }
    services:
      - { id: vllm, kind: vllm, remotePort: 8000, model: Qwen/Qwen3-8B, aliases: [qwen] }
proxy:
  clients:
    ci: { rpm: 5 }
`,
);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function cli(name: string, args: string[]): Promise<string> {
  const out: string[] = [];
  const cmd = proxyCommands.find((c) => c.name === name)!;
  await cmd.run([...args, '--data-dir', dir, '--json'], createOutput(true, { stdout: (s) => out.push(s), stderr: () => undefined }));
  return out.join('');
}

describe('tokens create / set with limits', () => {
  it('create stores the limits, set changes and clears them, list shows them', { timeout: 60_000 }, async () => {
    const created = JSON.parse(await cli('tokens create', ['app', '--models', 'qwen', '--rpm', '10', '--tpm', '20000', '--budget-usd', '25', '--expires', '30d'])) as TokenView & { token: string };
    expect(created.token).toMatch(/^gcp_/);
    expect(created.limits).toMatchObject({ models: ['qwen'], rpm: 10, tpm: 20_000, budgetUsd: 25, budgetAction: 'refuse' });
    expect(created.limits.expiresAt! - Date.now()).toBeGreaterThan(29 * 86_400_000);

    const set = JSON.parse(await cli('tokens set', ['app', '--rpm', '60', '--budget-action', 'warn', '--no-expiry', '--clear-models'])) as TokenView;
    expect(set.limits).toEqual({ models: [], rpm: 60, tpm: 20_000, budgetUsd: 25, budgetAction: 'warn', expiresAt: null });

    const { tokens } = JSON.parse(await cli('tokens list', [])) as { tokens: TokenView[] };
    expect(tokens.find((t) => t.name === 'app')!.limits).toEqual(set.limits);
  });

  it('a field set in config is shown as such and refused, nothing changed', { timeout: 60_000 }, async () => {
    const created = JSON.parse(await cli('tokens create', ['ci'])) as TokenView;
    expect(created.limits.rpm).toBe(5);
    expect(created.configFields).toEqual(['rpm']);
    await expect(cli('tokens set', ['ci', '--rpm', '50'])).rejects.toMatchObject({ code: TokenLimitErrorCode.FIELD_FROM_CONFIG });
    await expect(cli('tokens create', ['other', '--models', 'llama'])).rejects.toMatchObject({ code: TokenLimitErrorCode.UNKNOWN_MODELS });
    const { tokens } = JSON.parse(await cli('tokens list', [])) as { tokens: TokenView[] };
    expect(tokens.find((t) => t.name === 'ci')!.limits.rpm).toBe(5);
    expect(tokens.some((t) => t.name === 'other')).toBe(false);
  });
});
