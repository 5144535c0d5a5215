import { describe, expect, it } from 'vitest';
import { parseConfig, type ConfigIssue } from '../../../../src-main/core/config/index.js';
import { lifecycleTargets } from '../../../../src-main/core/lifecycle/targets.js';
import { driverFor } from '../../../../src-main/core/lifecycle/drivers/index.js';
import { configIssues } from './fixtures.js';

// Issue #32 item 3: kinds sglang, tei and openai beside vllm and llama-server; healthPath for the
// kinds without a fixed health endpoint; a driver written for another kind refused.

const opts = { file: 'config.yaml', home: '/home/me' };
const yaml = (...service: string[]) =>
  ['hosts:', '  - label: a', '    ssh: { host: 10.0.0.1, user: ops, agent: true }', '    services:', '      - id: s', '        remotePort: 8000', '        model: m', ...service.map((l) => `        ${l}`)].join('\n');
const issues = (text: string): ConfigIssue[] => configIssues(text, opts);

describe('service kinds', () => {
  it('takes sglang, tei and openai; healthPath where the kind has none fixed; default drivers restart only', () => {
    for (const kind of ['sglang', 'tei', 'openai'] as const) {
      const c = parseConfig(yaml(`kind: ${kind}`, 'healthPath: /ping', 'lifecycle: { systemdUnit: model.service }'), opts);
      expect(c.hosts[0]!.services[0]).toMatchObject({ kind, healthPath: '/ping' });
      const [t] = lifecycleTargets(c);
      expect(t).toMatchObject({ driver: 'ssh-command', healthPath: '/ping' });
      const d = driverFor(t!);
      expect(d.supports('restart')).toBe(true);
      expect(d.unavailable('sleep')).toBe(`a/s is kind ${kind}: the console has no driver to sleep a ${kind === 'sglang' ? 'SGLang' : kind === 'tei' ? 'TEI' : 'OpenAI-compatible server'}; it can only restart it (by its restartCommand, systemd unit or compose service)`);
      expect(() => d.plan('wake', { sleepLevel: null })).toThrow(expect.objectContaining({ code: 'LIFECYCLE_UNSUPPORTED_ACTION', message: expect.stringContaining(`kind ${kind}`) }));
      expect(d.checks?.('restart').map((x) => x.name)).toEqual(['health', 'probe']);
      expect(d.checks?.('restart')[0]!.text).toBe('GET /ping answers 2xx');
    }
    expect(lifecycleTargets(parseConfig(yaml('kind: openai'), opts))[0]).toMatchObject({ healthPath: '/v1/models' });
    expect(lifecycleTargets(parseConfig(yaml('kind: tei'), opts))[0]).toMatchObject({ healthPath: '/health' });
  });

  it('refuses an unknown kind naming the allowed ones', () => {
    expect(issues(yaml('kind: ollama'))).toEqual([expect.objectContaining({ path: 'hosts[0].services[0].kind', message: 'must be one of: vllm, llama-server, sglang, tei, openai' })]);
  });

  it('refuses healthPath on vllm and llama-server, and a healthPath that is not a path', () => {
    expect(issues(yaml('kind: vllm', 'healthPath: /ping'))).toEqual([
      expect.objectContaining({ path: 'hosts[0].services[0].healthPath', message: 'healthPath applies to kind sglang, tei, openai; a vllm service\'s health is read at /health' }),
    ]);
    for (const bad of ['ping', 'http://x/health', '/a b', '/$(reboot)\n']) {
      expect(issues(yaml('kind: openai', `healthPath: ${JSON.stringify(bad)}`))[0]).toMatchObject({ path: 'hosts[0].services[0].healthPath', message: expect.stringMatching(/starting with "\/"/) });
    }
  });

  it('refuses a driver written for another kind of server', () => {
    expect(issues(yaml('kind: sglang', 'lifecycle: { driver: vllm-sleep }'))).toEqual([
      expect.objectContaining({
        path: 'hosts[0].services[0].lifecycle.driver',
        message: 'the vllm-sleep driver acts on vllm servers; this service is kind sglang (use ssh-command to restart it by its command, systemd unit or compose service)',
      }),
    ]);
    expect(issues(yaml('kind: tei', 'lifecycle: { driver: llama-router }'))[0]).toMatchObject({ path: 'hosts[0].services[0].lifecycle.driver' });
  });
});
