import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { importSshConfig, loadSshConfigTree } from '../../../../src-main/core/ssh/index.js';

// Reading ~/.ssh/config from disk as ssh does: Includes inlined where they
// stand, relative to ~/.ssh, globs sorted, bounded depth, no file read twice.

let home: string;
const ssh = (...p: string[]) => join(home, '.ssh', ...p);

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'gc-sshcfg-'));
  mkdirSync(ssh('conf.d'), { recursive: true });
});

describe('loadSshConfigTree', () => {
  it('inlines Includes where they stand: globs sorted, ~ and relative paths, first value wins across files', async () => {
    writeFileSync(ssh('config'), 'Host gpu-*\n  User early\nInclude conf.d/*.conf ~/extra\nHost *\n  User late\n');
    writeFileSync(ssh('conf.d', '20-b.conf'), 'Host gpu-b\n  HostName 192.0.2.2\n');
    writeFileSync(ssh('conf.d', '10-a.conf'), 'Host gpu-a\n  HostName 192.0.2.1\n  Port 2222\n');
    writeFileSync(ssh('conf.d', 'ignored.txt'), 'Host not-me\n');
    writeFileSync(join(home, 'extra'), 'Host other\n  HostName 192.0.2.9\n');
    const loaded = await loadSshConfigTree(ssh('config'), home);
    expect(loaded.files).toEqual([ssh('config'), ssh('conf.d', '10-a.conf'), ssh('conf.d', '20-b.conf'), join(home, 'extra')]);
    const r = importSshConfig(loaded.lines, { home, localUser: 'me' }, loaded.issues);
    expect(r.hosts.map((h) => [h.alias, h.host, h.port, h.user])).toEqual([
      ['gpu-a', '192.0.2.1', 2222, 'early'],
      ['gpu-b', '192.0.2.2', 22, 'early'],
      ['other', '192.0.2.9', 22, 'late'],
    ]);
  });

  it('reports a missing or unreadable include, a cycle and runaway nesting by file and line, and reads on', async () => {
    writeFileSync(ssh('config'), 'Include missing.conf\nInclude loop.conf\nHost ok\n  HostName 192.0.2.3\n');
    writeFileSync(ssh('loop.conf'), 'Include loop.conf\nInclude config\n');
    const loaded = await loadSshConfigTree(ssh('config'), home);
    const r = importSshConfig(loaded.lines, { home, localUser: 'me' }, loaded.issues);
    expect(r.hosts.map((h) => h.alias)).toEqual(['ok']);
    const messages = r.issues.map((i) => `${i.file ?? 'root'}:${i.line} ${i.message}`);
    expect(messages).toContainEqual(expect.stringMatching(/^root:1 Include .*missing\.conf cannot be read \(ENOENT\)/));
    expect(messages).toContainEqual(expect.stringMatching(/loop\.conf:1 Include .*loop\.conf was already read/));
    expect(messages).toContainEqual(expect.stringMatching(/loop\.conf:2 Include .*config was already read/));

    // 20 files each including the next: nesting stops at 16 levels, as in OpenSSH.
    for (let i = 0; i < 20; i++) writeFileSync(ssh(`n${i}`), `Include n${i + 1}\nHost deep-${i}\n`);
    writeFileSync(ssh('n20'), 'Host deep-20\n');
    const deep = await loadSshConfigTree(ssh('n0'), home);
    expect(deep.files).toHaveLength(17);
    expect(deep.issues.map((i) => i.message)).toContainEqual(expect.stringMatching(/more than 16 levels/));
  });

  it('never echoes the text of an included file that is not ssh_config (a key, a passwd file)', async () => {
    writeFileSync(join(home, 'id_test'), '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----\n');
    symlinkSync('/etc/passwd', ssh('passwd-link'));
    writeFileSync(ssh('config'), 'Include ~/id_test passwd-link\nHost a\n  HostName 192.0.2.4\n');
    const loaded = await loadSshConfigTree(ssh('config'), home);
    const r = importSshConfig(loaded.lines, { home, localUser: 'me' }, loaded.issues);
    const text = JSON.stringify(r);
    for (const needle of ['BEGIN OPENSSH', 'b3BlbnNzaC1rZXkt', 'root:x', '/bin/']) expect(text).not.toContain(needle);
    expect(r.issues.filter((i) => i.file === join(home, 'id_test')).map((i) => i.line)).toEqual([1, 2, 3]);
  });

  it('names the file when the config itself cannot be read', async () => {
    await expect(loadSshConfigTree(ssh('nope'), home)).rejects.toMatchObject({ code: 'SSH_CONFIG_UNREADABLE', message: expect.stringContaining('nope') });
  });
});
