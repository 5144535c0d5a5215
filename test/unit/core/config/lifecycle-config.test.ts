import { describe, expect, it } from 'vitest';
import { ConfigSchema, parseConfig } from '../../../../src-main/core/config/index.js';
import { driverFor, lifecycleTargets } from '../../../../src-main/core/lifecycle/index.js';

// The lifecycle block: restart templates named the way operators run their
// servers (a systemd unit, a compose service), validated and shell-quoted;
// an explicit restartCommand still wins; llama-server's router mode.

const withService = (service: Record<string, unknown>) => ({
  hosts: [{ label: 'strix', ssh: { host: 'x', user: 'ops', agent: true }, services: [{ id: 'llama', kind: 'llama-server', remotePort: 8080, model: 'qwen3', ...service }] }],
});
const target = (service: Record<string, unknown>) => lifecycleTargets(ConfigSchema.parse(withService(service)))[0]!;
const restartOf = (lifecycle: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
  const t = target({ lifecycle, ...extra });
  return { command: t.restartCommand === null ? null : (driverFor(t).plan('restart', { sleepLevel: null })[0] as { command: string }).command, source: t.restartSource };
};
const issues = (lifecycle: Record<string, unknown>) => {
  const r = ConfigSchema.safeParse(withService({ lifecycle }));
  return r.success ? [] : r.error.issues.map((i) => `${i.path.slice(-2).join('.')}: ${i.message}`);
};

describe('restart templates', () => {
  it('systemdUnit → sudo -n systemctl restart <unit>; a user unit without sudo; useSudo: false drops it', () => {
    expect(restartOf({ systemdUnit: 'llama-server.service' })).toEqual({ command: 'sudo -n systemctl restart llama-server.service', source: 'systemd' });
    expect(restartOf({ systemdUnit: 'llama-server@qwen3.service' }).command).toBe('sudo -n systemctl restart llama-server@qwen3.service');
    expect(restartOf({ systemdUnit: 'llama-server', systemdUser: true }).command).toBe('systemctl --user restart llama-server');
    expect(restartOf({ systemdUnit: 'llama-server.service', useSudo: false }).command).toBe('systemctl restart llama-server.service');
  });

  it('compose → docker compose [-f file] [-p project] restart <service>, each value one quoted word (braces literal)', () => {
    expect(restartOf({ compose: { service: 'llama' } })).toEqual({ command: 'docker compose restart llama', source: 'compose' });
    expect(restartOf({ compose: { service: 'llama', file: '/srv/llama/compose.yaml', project: 'llm' } }).command).toBe('docker compose -f /srv/llama/compose.yaml -p llm restart llama');
    expect(restartOf({ compose: { service: 'llama', file: "/srv/my models/{x}/it's.yaml" }, useSudo: true }).command).toBe(`sudo -n docker compose -f '/srv/my models/{x}/it'\\''s.yaml' restart llama`);
  });

  it('an explicit restartCommand wins over the service\'s; beside a unit it is refused; nothing named: no restart offered', () => {
    // two ways to restart one service: refused at config check, naming both (not a silent winner)
    const both = ConfigSchema.safeParse(withService({ lifecycle: { systemdUnit: 'llama-server.service' }, restartCommand: 'sudo systemctl restart llama-server.service' }));
    expect(both.success).toBe(false);
    expect(both.error!.issues[0]!.message).toMatch(/restartCommand \(.*restartCommand\) is given too and would win/);
    expect(restartOf({ restartCommand: 'docker restart {service}' }, { restartCommand: 'ignored' }).command).toBe('docker restart llama');
    const none = target({});
    expect(none.restartCommand).toBeNull();
    expect(driverFor(none).supports('restart')).toBe(false);
    expect(driverFor(target({ lifecycle: { systemdUnit: 'llama-server.service' } })).supports('restart')).toBe(true);
  });

  it('router mode is a driver; the default for llama-server stays llama-server', () => {
    expect(target({}).driver).toBe('llama-server');
    expect(target({ lifecycle: { driver: 'llama-router' } }).driver).toBe('llama-router');
  });
});

describe('lifecycle values are validated', () => {
  it('unit names: no option-looking, shell or other-type names', () => {
    expect(issues({ systemdUnit: '-H evil' })[0]).toMatch(/^lifecycle.systemdUnit: must be a unit name/);
    expect(issues({ systemdUnit: 'llama;reboot' })[0]).toMatch(/must be a unit name/);
    expect(issues({ systemdUnit: 'llama-server.socket' })).toEqual(['lifecycle.systemdUnit: restart a .service unit (this names another unit type)']);
  });

  it('compose values, and combinations that would leave a setting unused', () => {
    expect(issues({ compose: { service: '--all' } })[0]).toMatch(/^compose.service: must start with a letter or digit/);
    expect(issues({ compose: { service: 'llama', project: 'LLM' } })[0]).toMatch(/^compose.project: must be lowercase/);
    expect(issues({ compose: { service: 'llama', file: '~/compose.yaml' } })).toEqual(['compose.file: write the full path: the command is shell-quoted, so "~" is not expanded']);
    expect(issues({ compose: { service: 'llama', bogus: 1 } })[0]).toMatch(/^lifecycle.compose/);
    expect(issues({ systemdUnit: 'a.service', compose: { service: 'llama' } })).toEqual(['lifecycle.compose: give systemdUnit or compose, not both']);
    expect(issues({ systemdUnit: 'a.service', restartCommand: 'x' })).toEqual(['lifecycle.systemdUnit: restartCommand is given too and would win; keep one of them']);
    expect(issues({ systemdUnit: 'a.service', systemdUser: true, useSudo: true })).toEqual(['lifecycle.useSudo: a user unit is restarted as the SSH user (systemctl --user), not with sudo']);
    expect(issues({ useSudo: true })).toEqual(['lifecycle.useSudo: useSudo applies to systemdUnit or compose; write sudo into restartCommand instead']);
    expect(issues({ driver: 'llama-routr' })[0]).toMatch(/must be one of: .*llama-router/);
  });

  it('from YAML, an error names the file, line and field', () => {
    const yaml = ['hosts:', '  - label: strix', '    ssh: { host: x, user: ops, agent: true }', '    services:', '      - id: llama', '        kind: llama-server', '        remotePort: 8080', '        model: q', '        lifecycle:', '          systemdUnit: "-x"', ''].join('\n');
    expect(() => parseConfig(yaml, { file: 'c.yaml', home: '/home/ops' })).toThrow(/c\.yaml:10:\d+ hosts\[0\]\.services\[0\]\.lifecycle\.systemdUnit: must be a unit name/);
  });
});
