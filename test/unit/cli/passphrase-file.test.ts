import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createOutput } from '../../../src-main/cli/output.js';
import { runCli } from '../../../src-main/cli/run.js';

// `report build --passphrase-file` is read as a key file is (issue #26 low):
// a FIFO or a device named by mistake is refused at once, not read or waited on.

const dir = mkdtempSync(join(tmpdir(), 'gc-cli-passfile-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function build(passFile: string): Promise<{ code: number; stderr: string }> {
  const stderr: string[] = [];
  const code = await runCli(['report', 'build', '--sign', join(dir, 'key'), '--passphrase-file', passFile, '--data-dir', dir], createOutput(false, { stdout: () => undefined, stderr: (s) => stderr.push(s) }));
  return { code, stderr: stderr.join('') };
}

describe('report build --passphrase-file', () => {
  it('refuses /dev/zero and a FIFO with exit 2, naming the flag and what the path is', async () => {
    const zero = await build('/dev/zero');
    expect(zero).toMatchObject({ code: 2, stderr: expect.stringContaining('cannot read --passphrase-file /dev/zero: not a regular file: a character device') });
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    expect(await build(fifo)).toMatchObject({ code: 2, stderr: expect.stringContaining('not a regular file: a FIFO') });
  }, 5_000);

  it('a missing file names its errno', async () => {
    expect(await build(join(dir, 'nope'))).toMatchObject({ code: 2, stderr: expect.stringContaining('ENOENT') });
  });
});
