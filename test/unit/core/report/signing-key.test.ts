import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ReportErrorCode } from '../../../../src-main/core/report/errors.js';
import { loadSigner } from '../../../../src-main/core/report/sshsig.js';

// Issue #26 (low): reports.export signed with any readable key file — the SSH
// host key worked as root. A signing key must be the operator's own and kept
// as ssh keeps one (ssh-keygen -Y sign refuses an unprotected private key).

const dir = mkdtempSync(join(tmpdir(), 'gc-signkey-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const HOST_KEY = '/etc/ssh/ssh_host_ed25519_key';
const uid = typeof process.getuid === 'function' ? process.getuid() : null;

function keygen(name: string, comment = 'op@laptop'): string {
  const file = join(dir, name);
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', comment, '-f', file]);
  return file;
}

describe.skipIf(uid === null)('signing keys the console refuses', () => {
  it('signs with the operator\'s own 0600 key, also through a symlink', async () => {
    const key = keygen('own');
    symlinkSync(key, join(dir, 'own-link'));
    expect((await loadSigner(key)).fingerprint).toMatch(/^SHA256:/);
    expect((await loadSigner(join(dir, 'own-link'))).fingerprint).toMatch(/^SHA256:/);
  });

  it.skipIf(!existsSync(HOST_KEY))("refuses this machine's SSH host key (it is readable here)", async () => {
    await expect(loadSigner(HOST_KEY)).rejects.toMatchObject({ code: ReportErrorCode.SIGNING_KEY_REFUSED, message: expect.stringContaining('host or system key') });
    // Copied under its own name, or linked from elsewhere, it is still refused.
    const copy = join(dir, 'ssh_host_ed25519_key');
    copyFileSync(HOST_KEY, copy);
    chmodSync(copy, 0o600);
    await expect(loadSigner(copy)).rejects.toMatchObject({ code: ReportErrorCode.SIGNING_KEY_REFUSED });
    symlinkSync(HOST_KEY, join(dir, 'innocent'));
    await expect(loadSigner(join(dir, 'innocent'))).rejects.toMatchObject({ code: ReportErrorCode.SIGNING_KEY_REFUSED, details: { realPath: HOST_KEY } });
  });

  it('refuses a key whose comment says it is a host key', async () => {
    const key = keygen('renamed', 'root@gpu-1 host key');
    await expect(loadSigner(key)).rejects.toMatchObject({ code: ReportErrorCode.SIGNING_KEY_REFUSED, message: expect.stringContaining('says it is a host key') });
  });

  it('refuses a key group or others may read, naming its mode and the fix', async () => {
    const key = keygen('open');
    chmodSync(key, 0o644);
    await expect(loadSigner(key)).rejects.toMatchObject({ code: ReportErrorCode.SIGNING_KEY_REFUSED, message: expect.stringContaining(`permissions 0644 let others read it; a private key must be readable by its owner only (chmod 600 ${key})`) });
    chmodSync(key, 0o640);
    await expect(loadSigner(key)).rejects.toMatchObject({ code: ReportErrorCode.SIGNING_KEY_REFUSED, details: { mode: '0640' } });
  });

  it("refuses another user's key", async () => {
    const key = keygen('theirs');
    if (uid === 0) chownSync(key, 4321, 4321);
    // Not root: the file is ours, so ask as someone else instead.
    const asUid = uid === 0 ? 0 : uid! + 1;
    await expect(loadSigner(key, undefined, { uid: asUid })).rejects.toMatchObject({ code: ReportErrorCode.SIGNING_KEY_REFUSED, message: expect.stringMatching(/owned by uid \d+, not by the console's user/) });
  });

  it('a FIFO or a device is refused without blocking or reading', async () => {
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', ['-m', '600', fifo]);
    await expect(loadSigner(fifo)).rejects.toMatchObject({ code: ReportErrorCode.SIGNING_KEY_UNREADABLE, message: expect.stringContaining('not a regular file: a FIFO') });
    mkdirSync(join(dir, 'sub'));
    await expect(loadSigner(join(dir, 'sub'))).rejects.toMatchObject({ code: ReportErrorCode.SIGNING_KEY_UNREADABLE, message: expect.stringContaining('a folder') });
    await expect(loadSigner('/dev/zero')).rejects.toMatchObject({ code: ReportErrorCode.SIGNING_KEY_UNREADABLE, message: expect.stringContaining('a character device') });
  }, 5_000);
});
