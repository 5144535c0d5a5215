import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkKeyFile, loadKeyFile, MAX_KEY_FILE_BYTES } from '../../../../src-main/core/ssh/index.js';
import { checkCertificate } from '../../../../src-main/core/ssh/openssh-commands.js';

// Issue #26 (low): key files were read with no type or size check. /dev/zero
// as identityFile grew the console to 1.6 GB in 2 s; a FIFO as a signing key
// blocked exports until restart. Now the path must name a regular file (a
// symlink to one is fine) of at most 64 KiB, checked before anything is read.

const dir = mkdtempSync(join(tmpdir(), 'gc-keyfile-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const CAN_MKFIFO = process.platform !== 'win32';

describe('key files are what they claim to be', () => {
  it('refuses /dev/zero at once, without reading it', async () => {
    const before = process.memoryUsage().rss;
    const t0 = Date.now();
    await expect(loadKeyFile('/dev/zero')).rejects.toMatchObject({ code: 'SSH_KEY_NOT_A_FILE', message: expect.stringContaining('/dev/zero is not a regular file (a character device)') });
    expect(Date.now() - t0).toBeLessThan(1_000);
    expect(process.memoryUsage().rss - before).toBeLessThan(64 * 1024 * 1024);
  });

  it.skipIf(!CAN_MKFIFO)('refuses a FIFO without blocking on it, directly or through a symlink', async () => {
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    symlinkSync(fifo, join(dir, 'link-to-fifo'));
    // No writer ever opens it: a blocking open would hang the test until its timeout.
    await expect(loadKeyFile(fifo)).rejects.toMatchObject({ code: 'SSH_KEY_NOT_A_FILE', details: { path: fifo, reason: 'not a regular file: a FIFO' } });
    await expect(loadKeyFile(join(dir, 'link-to-fifo'))).rejects.toMatchObject({ code: 'SSH_KEY_NOT_A_FILE' });
  }, 5_000);

  it.skipIf(!CAN_MKFIFO)('a certificateFile that is a FIFO is refused before ssh-keygen is asked to read it', async () => {
    const fifo = join(dir, 'cert-fifo');
    execFileSync('mkfifo', [fifo]);
    const t0 = Date.now();
    await expect(checkCertificate(fifo, 'ops', 'gpu-1', Date.now())).rejects.toMatchObject({ code: 'SSH_KEY_NOT_A_FILE', message: expect.stringContaining('gpu-1: certificate') });
    // ssh-keygen -L on it would have waited out its 5 s timeout.
    expect(Date.now() - t0).toBeLessThan(2_000);
  }, 10_000);

  it('refuses a folder and a file over the cap, naming the path', async () => {
    await expect(loadKeyFile(dir)).rejects.toMatchObject({ code: 'SSH_KEY_NOT_A_FILE', message: expect.stringContaining('(a folder)') });
    const big = join(dir, 'big');
    writeFileSync(big, Buffer.alloc(MAX_KEY_FILE_BYTES + 1, 0x41), { mode: 0o600 });
    await expect(loadKeyFile(big)).rejects.toMatchObject({ code: 'SSH_KEY_TOO_LARGE', details: { path: big } });
    await expect(checkKeyFile(big, 'certificate')).rejects.toMatchObject({ code: 'SSH_KEY_TOO_LARGE', message: expect.stringMatching(/^certificate .*big is larger than 64 KiB/) });
  });

  it('follows a symlink to a real key, and a key exactly at the cap is read', async () => {
    const key = join(dir, 'id');
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key]);
    symlinkSync(key, join(dir, 'id-link'));
    expect((await loadKeyFile(join(dir, 'id-link'))).key.type).toBe('ssh-ed25519');
    const atCap = join(dir, 'at-cap');
    writeFileSync(atCap, Buffer.alloc(MAX_KEY_FILE_BYTES, 0x41), { mode: 0o600 });
    // Read whole (then refused as no key, which is the parser's verdict, not the size check's).
    await expect(loadKeyFile(atCap)).rejects.toMatchObject({ code: 'SSH_KEY_UNREADABLE' });
  });

  it('a missing file is still SSH_KEY_UNREADABLE with its errno', async () => {
    await expect(checkKeyFile(join(dir, 'nope'))).rejects.toMatchObject({ code: 'SSH_KEY_UNREADABLE', details: { reason: 'ENOENT' } });
  });
});
