import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigSchema } from '../../../../src-main/core/config/index.js';
import { logCommand, logSourceOf, type LogSource } from '../../../../src-main/core/logs/index.js';

// The commands are run by a real sh here, against stand-ins for journalctl,
// docker and tail that print the argv they were given, one argument a line:
// (NUL-separated, so an argument holding a newline stays one): what the
// host's shell would hand the tool, hostile values included.

const bin = mkdtempSync(join(tmpdir(), 'gc-logs-bin-'));
for (const tool of ['journalctl', 'docker', 'tail', 'sudo', 'vllmctl']) {
  writeFileSync(join(bin, tool), `#!/bin/sh\nprintf '%s\\0' "${tool}" "$@"\n`);
  chmodSync(join(bin, tool), 0o755);
}
afterAll(() => rmSync(bin, { recursive: true, force: true }));

const VARS = { service: 'llm', host: 'gpu-1', model: 'm', port: 8080 };

/** The argv the built command gives its tool, as sh parses it (nothing else runs: no `id`, no `rm`). */
function argvOf(command: string): string[] {
  const out = execFileSync('/bin/sh', ['-c', command], { env: { PATH: bin }, encoding: 'utf8' });
  return out.replace(/\0$/, '').split('\0');
}

const HOSTILE = ['$(id)', '`id`', 'a;id', 'x\nid', '-rf', "it's", '*'];

describe('log commands are argv, whatever the values', () => {
  it.each(HOSTILE)('journal unit %j stays one literal argument', (unit) => {
    const argv = argvOf(logCommand({ kind: 'journal', unit, user: false }, { lines: 5, follow: false }, VARS));
    expect(argv).toContain(`--unit=${unit}`);
    expect(argv.join('\n')).not.toMatch(/uid=\d+/);
  });

  it.each(HOSTILE)('file path %j stays one literal argument after --', (path) => {
    const argv = argvOf(logCommand({ kind: 'file', path }, { lines: 5, follow: true }, VARS));
    expect(argv).toEqual(['tail', '--lines=5', '-F', '--', path]);
  });

  it.each(HOSTILE)('container and compose service %j stay literal, after --', (name) => {
    expect(argvOf(logCommand({ kind: 'docker', container: name, sudo: false }, { lines: 3, follow: false }, VARS)).slice(-2)).toEqual(['--', name]);
    const compose = argvOf(logCommand({ kind: 'compose', service: name, files: [`/srv/${name}.yml`], project: null, projectDirectory: null, sudo: false }, { lines: 3, follow: false }, VARS));
    expect(compose.slice(-2)).toEqual(['--', name]);
    expect(compose.slice(0, 5)).toEqual(['docker', 'compose', '-f', `/srv/${name}.yml`, 'logs']);
  });

  it.each(HOSTILE)('a command template fills %j as one quoted word', (service) => {
    const src: LogSource = { kind: 'command', tail: 'vllmctl logs --tail {lines} {service}', follow: null };
    expect(argvOf(logCommand(src, { lines: 7, follow: false }, { ...VARS, service }))).toEqual(['vllmctl', 'logs', '--tail', '7', service]);
  });
});

describe('log commands per query', () => {
  const journal: LogSource = { kind: 'journal', unit: 'llama-server.service', user: false };

  it('journal: last N as JSON with the fields the view needs; follow; since; resume after a cursor', () => {
    const base = ['journalctl', '--unit=llama-server.service', '--output=json', '--all', '--no-pager', '--output-fields=MESSAGE,PRIORITY,_PID,SYSLOG_IDENTIFIER'];
    expect(argvOf(logCommand(journal, { lines: 300, follow: false }, VARS))).toEqual([...base, '--lines=300']);
    expect(argvOf(logCommand(journal, { lines: 100, follow: true }, VARS))).toEqual([...base, '--lines=100', '--follow']);
    expect(argvOf(logCommand(journal, { lines: 0, sinceMs: 1_700_000_000_500, follow: false }, VARS))).toEqual([...base, '--since=@1700000000', '--lines=all']);
    expect(argvOf(logCommand(journal, { lines: 0, follow: true, resume: { cursor: 's=ab;i=1f' } }, VARS))).toEqual([...base, '--after-cursor=s=ab;i=1f', '--lines=all', '--follow']);
    expect(argvOf(logCommand({ ...journal, user: true }, { lines: 1, follow: false }, VARS)).slice(0, 3)).toEqual(['journalctl', '--user', '--unit=llama-server.service']);
  });

  it("docker and compose: the source's timestamps; a resume from the last one", () => {
    expect(argvOf(logCommand({ kind: 'docker', container: 'vllm', sudo: true }, { lines: 300, follow: true }, VARS))).toEqual(['sudo', '-n', 'docker', 'logs', '--timestamps', '--tail=300', '--follow', '--', 'vllm']);
    const compose: LogSource = { kind: 'compose', service: 'vllm', files: ['/srv/a.yml', '/srv/b.yml'], project: 'llm', projectDirectory: '/srv', sudo: false };
    expect(argvOf(logCommand(compose, { lines: 0, follow: true, resume: { timestamp: '2026-12-05T01:02:03.123456789Z' } }, VARS))).toEqual([
      'docker', 'compose', '-f', '/srv/a.yml', '-f', '/srv/b.yml', '-p', 'llm', '--project-directory=/srv', 'logs', '--no-color', '--no-log-prefix', '--timestamps', '--since=2026-12-05T01:02:03.123456789Z', '--follow', '--', 'vllm',
    ]);
  });

  it('a file cannot be asked for a time; a command without {since} neither; a command without follow cannot follow', () => {
    expect(() => logCommand({ kind: 'file', path: '/var/log/x.log' }, { lines: 5, sinceMs: 1, follow: false }, VARS)).toThrow(expect.objectContaining({ code: 'LOGS_SINCE_UNSUPPORTED' }));
    const cmd: LogSource = { kind: 'command', tail: 'vllmctl logs {service}', follow: null };
    expect(() => logCommand(cmd, { lines: 5, sinceMs: 1, follow: false }, VARS)).toThrow(expect.objectContaining({ code: 'LOGS_SINCE_UNSUPPORTED' }));
    expect(() => logCommand(cmd, { lines: 5, follow: true }, VARS)).toThrow(expect.objectContaining({ code: 'LOGS_FOLLOW_UNSUPPORTED' }));
    const since: LogSource = { kind: 'command', tail: 'vllmctl logs --since {since} {service}', follow: null };
    expect(argvOf(logCommand(since, { lines: 5, sinceMs: 0, follow: false }, VARS))).toEqual(['vllmctl', 'logs', '--since', '1970-01-01T00:00:00.000Z', 'llm']);
  });
});

function serviceOf(extra: Record<string, unknown>) {
  return ConfigSchema.parse({ hosts: [{ label: 'h', ssh: { host: 'gpu', user: 'ops', agent: true }, services: [{ id: 's', kind: 'vllm', remotePort: 8000, model: 'm', ...extra }] }] }).hosts[0]!.services[0]!;
}

describe('where a service logs by default', () => {
  it('a systemd unit reads its journal (a user unit its user journal)', () => {
    expect(logSourceOf(serviceOf({ lifecycle: { systemdUnit: 'vllm.service' } }))).toEqual({ kind: 'journal', unit: 'vllm.service', user: false });
    expect(logSourceOf(serviceOf({ lifecycle: { systemdUnit: 'vllm.service', systemdUser: true } }))).toEqual({ kind: 'journal', unit: 'vllm.service', user: true });
  });

  it("a compose service reads docker compose logs with the lifecycle's file, project and sudo", () => {
    expect(logSourceOf(serviceOf({ lifecycle: { compose: { service: 'vllm', file: '/srv/llm/compose.yml', project: 'llm' }, useSudo: true } }))).toEqual({
      kind: 'compose', service: 'vllm', files: ['/srv/llm/compose.yml'], project: 'llm', projectDirectory: null, sudo: true,
    });
  });

  it('a logs block wins over the lifecycle; no source at all is null', () => {
    expect(logSourceOf(serviceOf({ lifecycle: { systemdUnit: 'vllm.service' }, logs: { file: '/var/log/vllm.log' } }))).toEqual({ kind: 'file', path: '/var/log/vllm.log' });
    expect(logSourceOf(serviceOf({ logs: { docker: { container: 'vllm-1', sudo: true } } }))).toEqual({ kind: 'docker', container: 'vllm-1', sudo: true });
    expect(logSourceOf(serviceOf({ logs: { command: { tail: 'vllmctl logs {service}', follow: 'vllmctl logs -f {service}' } } }))).toEqual({ kind: 'command', tail: 'vllmctl logs {service}', follow: 'vllmctl logs -f {service}' });
    expect(logSourceOf(serviceOf({}))).toBeNull();
  });
});

describe('services[].logs in the config', () => {
  const bad = (logs: unknown) => () => serviceOf({ logs });
  it.each([
    [{ journal: '-x.service' }, /unit name/],
    [{ journal: 'a;b' }, /unit name/],
    [{ file: 'relative/x.log' }, /full path/],
    [{ file: '/var/log/a\nb' }, /one line/],
    [{ docker: '--privileged' }, /container name/],
    [{ compose: { service: 'vllm', files: ['~/c.yml'] } }, /full path/],
    [{}, /give one of: journal, compose, docker, file, command/],
    [{ journal: 'a.service', file: '/x' }, /give one source, not journal and file/],
    [{ syslog: 'x' }, /Unrecognized key|unrecognized/i],
  ])('%j is refused, saying why', (logs, why) => {
    expect(bad(logs)).toThrow(why);
  });
});
