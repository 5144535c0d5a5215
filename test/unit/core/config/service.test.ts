import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigService, loadConfigFile, type Config } from '../../../../src-main/core/config/index.js';
import { EXAMPLE, withLine } from './fixtures.js';

let dir: string;
let file: string;
const home = '/home/ops';

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'gpu-console-config-'));
  file = join(dir, 'config.yaml');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('loadConfigFile', () => {
  it('reads and parses the file, naming it in errors', async () => {
    writeFileSync(file, EXAMPLE);
    expect((await loadConfigFile(file, { home })).hosts[0]!.label).toBe('l20-poc');
    writeFileSync(file, withLine(11, '        remotePort: 0'));
    await expect(loadConfigFile(file, { home })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: `${file}:11:21 hosts[0].services[0].remotePort: must be between 1 and 65535`,
      details: { file },
    });
  });

  it('missing file is CONFIG_NOT_FOUND', async () => {
    await expect(loadConfigFile(join(dir, 'nope.yaml'), { home })).rejects.toMatchObject({ code: 'CONFIG_NOT_FOUND' });
  });

  it('a folder (or unreadable file) is CONFIG_UNREADABLE', async () => {
    mkdirSync(join(dir, 'folder.yaml'));
    await expect(loadConfigFile(join(dir, 'folder.yaml'), { home })).rejects.toMatchObject({ code: 'CONFIG_UNREADABLE' });
    if (process.getuid?.() !== 0) {
      writeFileSync(file, EXAMPLE);
      chmodSync(file, 0o000);
      await expect(loadConfigFile(file, { home })).rejects.toMatchObject({ code: 'CONFIG_UNREADABLE' });
    }
  });
});

describe('ConfigService', () => {
  it('starts empty, loads on reload and emits the change', async () => {
    writeFileSync(file, EXAMPLE);
    const service = new ConfigService({ path: file, home });
    const seen: Config[] = [];
    service.onDidChange((c) => seen.push(c));
    expect(service.path).toBe(file);
    expect(service.current.hosts).toEqual([]);
    expect(await service.reload()).toBeNull();
    expect(service.current.hosts.map((h) => h.label)).toEqual(['l20-poc']);
    expect(service.current.hosts[0]!.ssh.identityFile).toBe('/home/ops/.ssh/id_ed25519');
    expect(seen).toHaveLength(1);
    expect(seen[0]).toBe(service.current);
    service.dispose();
  });

  it('keeps the last good config after a bad reload, then recovers', async () => {
    writeFileSync(file, EXAMPLE);
    const service = new ConfigService({ path: file, home });
    const seen: Config[] = [];
    service.onDidChange((c) => seen.push(c));
    await service.reload();
    const good = service.current;

    writeFileSync(file, withLine(3, '    ssh: { host: 203.0.113.10, port: 70000, user: ops, agent: true }'));
    const error = await service.reload();
    expect(error).toMatchObject({ code: 'CONFIG_INVALID', details: { issues: [{ path: 'hosts[0].ssh.port', line: 3 }] } });
    expect(service.lastError).toBe(error);
    expect(service.current).toBe(good);
    expect(seen).toHaveLength(1);

    rmSync(file);
    expect(await service.reload()).toMatchObject({ code: 'CONFIG_NOT_FOUND' });
    expect(service.current).toBe(good);

    writeFileSync(file, withLine(15, '        slots: 8'));
    expect(await service.reload()).toBeNull();
    expect(service.lastError).toBeNull();
    expect(service.current.hosts[0]!.services[0]!.slots).toBe(8);
    expect(seen).toHaveLength(2);
    expect(seen[1]!.hosts[0]!.services[0]!.slots).toBe(8);
    service.dispose();
  });

  it('does not emit when a reload yields the same config', async () => {
    writeFileSync(file, EXAMPLE);
    const service = new ConfigService({ path: file, home });
    let changes = 0;
    service.onDidChange(() => changes++);
    await service.reload();
    writeFileSync(file, '# same content, new comment\n' + EXAMPLE);
    expect(await service.reload()).toBeNull();
    expect(changes).toBe(1);
    service.dispose();
  });

  it('serialises concurrent reloads: the last one read wins', async () => {
    writeFileSync(file, EXAMPLE);
    const service = new ConfigService({ path: file, home });
    const a = service.reload();
    const b = service.reload();
    expect(await Promise.all([a, b])).toEqual([null, null]);
    expect(service.current.hosts).toHaveLength(1);
    service.dispose();
  });

  it('replace installs a config built in code and validates it', () => {
    const service = new ConfigService({ path: file, home });
    const seen: Config[] = [];
    service.onDidChange((c) => seen.push(c));
    const installed = service.replace({ hosts: [{ label: 'demo-a', ssh: { host: '127.0.0.1', port: 2222, user: 'demo', identityFile: '~/.demo/key' } }] });
    expect(installed.hosts[0]!.ssh.identityFile).toBe('/home/ops/.demo/key');
    expect(service.current).toBe(installed);
    expect(seen).toEqual([installed]);

    expect(() => service.replace({ hosts: [{ label: 'x', ssh: { host: 'h', user: 'u' } }] })).toThrow(/needs identityFile or agent/);
    expect(service.current).toBe(installed);
    expect(seen).toHaveLength(1);
    service.dispose();
  });

  it('dispose removes listeners and stops reloads from installing', async () => {
    writeFileSync(file, EXAMPLE);
    const service = new ConfigService({ path: file, home });
    let changes = 0;
    service.onDidChange(() => changes++);
    service.dispose();
    service.dispose();
    expect(await service.reload()).toBeNull();
    expect(changes).toBe(0);
    expect(service.current.hosts).toEqual([]);
  });
});
