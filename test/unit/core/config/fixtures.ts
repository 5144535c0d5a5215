import { expect } from 'vitest';
import { parseConfig, type ConfigIssue } from '../../../../src-main/core/config/index.js';

// The example config from the brief; line numbers in comments are what the
// error tests rely on.
export const EXAMPLE_LINES = [
  'hosts:', // 1
  '  - label: l20-poc', // 2
  '    ssh: { host: 203.0.113.10, port: 22, user: ops, identityFile: ~/.ssh/id_ed25519 }', // 3
  '    knownHostsFile: ~/.ssh/known_hosts', // 4
  '    gpu: { model: NVIDIA L20, count: 1 }', // 5
  '    pricePerHourUsd: 2.641736', // 6
  '    services:', // 7
  '      - id: qwen', // 8
  '        kind: vllm', // 9
  '        remoteHost: 127.0.0.1', // 10
  '        remotePort: 8000', // 11
  '        localPort: 18000', // 12
  '        model: Qwen3.6-27B-FP8', // 13
  '        aliases: [qwen]', // 14
  '        slots: 4', // 15
  '        restartCommand: docker compose -f /srv/vllm/compose.yaml restart vllm', // 16
  'telemetry: { pollIntervalMs: 1000 }', // 17
  'proxy: { port: 0 }', // 18
  'ui: { port: 0 }', // 19
];

export const EXAMPLE = EXAMPLE_LINES.join('\n') + '\n';


/** Returns the example with line `n` (1-based) replaced by `lines`. */
export function withLine(n: number, ...lines: string[]): string {
  const copy = [...EXAMPLE_LINES];
  copy.splice(n - 1, 1, ...lines);
  return copy.join('\n') + '\n';
}

/** The example with extra hosts inserted before `telemetry:` (line 17). */
export function withHosts(...lines: string[]): string {
  return withLine(17, ...lines, EXAMPLE_LINES[16]!);
}

/** The issues a config text is refused with (CONFIG_INVALID); fails the test if it is taken. */
export function configIssues(text: string, opts = { file: 'config.yaml', home: '/home/me' }): ConfigIssue[] {
  try {
    parseConfig(text, opts);
  } catch (err) {
    const e = err as { code: string; details: { issues: ConfigIssue[] } };
    expect(e.code).toBe('CONFIG_INVALID');
    return e.details.issues;
  }
  throw new Error('expected CONFIG_INVALID');
}
