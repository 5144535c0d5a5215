import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadPrivateKey } from '../../../../src-main/core/ssh/index.js';

const dir = mkdtempSync(join(tmpdir(), 'keys-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('loadPrivateKey', () => {
  it('loads an unencrypted key', async () => {
    const file = join(dir, 'plain');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', file]);
    expect((await loadPrivateKey(file)).length).toBeGreaterThan(100);
  });

  it('says a passphrase is required for an encrypted key', async () => {
    const file = join(dir, 'enc');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', 'secret-pass', '-f', file]);
    await expect(loadPrivateKey(file)).rejects.toMatchObject({ code: 'SSH_PASSPHRASE_REQUIRED' });
    expect((await loadPrivateKey(file, 'secret-pass')).length).toBeGreaterThan(100);
  });

  it('reports a missing file and a file that is not a key as SSH_KEY_UNREADABLE with a reason', async () => {
    await expect(loadPrivateKey(join(dir, 'nope'))).rejects.toMatchObject({ code: 'SSH_KEY_UNREADABLE', details: { reason: 'ENOENT' } });
    const junk = join(dir, 'junk');
    writeFileSync(junk, 'this is not a key\n');
    const err = await loadPrivateKey(junk).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'SSH_KEY_UNREADABLE' });
    expect((err as { details: { reason: string } }).details.reason).toMatch(/.+/);
  });

  it('refuses a public key given as identityFile', async () => {
    const file = join(dir, 'pubonly');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', file]);
    await expect(loadPrivateKey(`${file}.pub`)).rejects.toMatchObject({ code: 'SSH_KEY_UNREADABLE' });
  });
});
