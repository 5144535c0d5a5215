import { describe, expect, it } from 'vitest';
import { parseConfig, type ConfigIssue } from '../../../../src-main/core/config/index.js';
import { configIssues } from './fixtures.js';

// Host health settings (issue #29 item 2): fleet-wide and per host; model cache
// paths stay as written (the host's own shell expands ~ from its $HOME), and a
// bad value is refused at load naming the field.

const opts = { file: 'config.yaml', home: '/home/me' };
const yaml = (health: string, hostHealth = '') =>
  ['health:', ...health.split('\n').map((l) => `  ${l}`), 'hosts:', '  - label: a', '    ssh: { host: 10.0.0.1, user: ops, agent: true }', ...(hostHealth ? ['    health:', ...hostHealth.split('\n').map((l) => `      ${l}`)] : [])].join('\n');

const issues = (text: string): ConfigIssue[] => configIssues(text, opts);

describe('health config', () => {
  it('takes fleet-wide and per-host settings; ~ in a model cache path is left for the host to expand', () => {
    const c = parseConfig(yaml('intervalMs: 30000\ncacheSizeIntervalMs: 3600000', "modelCache: ['~/hf', '/srv/models']\ncacheSizeTimeoutS: 120"), opts);
    expect(c.health).toEqual({ intervalMs: 30_000, cacheSizeIntervalMs: 3_600_000 });
    expect(c.hosts[0]!.health).toEqual({ modelCache: ['~/hf', '/srv/models'], cacheSizeTimeoutS: 120 });
    expect(parseConfig(yaml('intervalMs: 0'), opts).health).toEqual({ intervalMs: 0 });
  });

  it('refuses a relative path, a path with a newline, too short an interval and unknown keys, naming the field', () => {
    const found = issues(yaml('intervalMs: 1000\npollEvery: 5', "modelCache: ['models/hf', \"/srv/a\\nb\"]"));
    const byPath = Object.fromEntries(found.map((i) => [i.path, i.message]));
    expect(byPath['hosts[0].health.modelCache[0]']).toBe('a model cache path must start with "/" or "~/" (~ is the SSH user\'s home on the host)');
    expect(byPath['hosts[0].health.modelCache[1]']).toBe('a model cache path must be one line');
    expect(Object.keys(byPath)).toEqual(expect.arrayContaining(['health.intervalMs', 'hosts[0].health.modelCache[0]', 'hosts[0].health.modelCache[1]']));
    expect(found.some((i) => /pollEvery/.test(i.message) || i.path.includes('pollEvery'))).toBe(true);
  });

  it('kernelLog: auto, journalctl, dmesg or off (how Xid events are read); anything else refused naming the field', () => {
    expect(parseConfig(yaml('kernelLog: off', 'kernelLog: dmesg'), opts).hosts[0]!.health).toEqual({ kernelLog: 'dmesg' });
    const found = issues(yaml('kernelLog: sudo dmesg'));
    expect(found).toEqual([expect.objectContaining({ path: 'health.kernelLog', message: 'kernelLog must be auto, journalctl, dmesg or off' })]);
  });
});
