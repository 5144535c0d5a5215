import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureWritableDir } from '../../../../src-main/core/report/exporter.js';
import { ReportErrorCode } from '../../../../src-main/core/report/errors.js';

// Issue #26 (low): reports.export's outDir created folders anywhere (mkdir -p
// of whatever path came in). The rule now, as mkdir would have it: an existing
// folder is used; a missing one is made when its parent exists; a chain of
// missing folders only inside the operator's home or the reports folder.

const root = mkdtempSync(join(tmpdir(), 'gc-outdir-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const home = join(root, 'home');
const reports = join(root, 'data', 'reports');
mkdirSync(home);
const roots = [home, reports];

describe('report output folders', () => {
  it('uses an existing folder anywhere, and makes one missing folder under an existing parent (0700)', async () => {
    await ensureWritableDir(root, roots);
    await ensureWritableDir(join(root, 'one'), roots);
    expect(statSync(join(root, 'one')).mode & 0o777).toBe(0o700);
  });

  it('refuses a chain of missing folders outside home and the reports folder, creating nothing', async () => {
    const deep = join(root, 'a', 'b', 'c');
    await expect(ensureWritableDir(deep, roots)).rejects.toMatchObject({
      code: ReportErrorCode.OUTPUT_DIR_REFUSED,
      details: { dir: deep, missingLevels: 3 },
      message: expect.stringContaining(`create ${join(root, 'a', 'b')} first`),
    });
    expect(existsSync(join(root, 'a'))).toBe(false);
    // Without any root (the exporter's own re-check) no chain is made anywhere.
    await expect(ensureWritableDir(join(home, 'x', 'y'))).rejects.toMatchObject({ code: ReportErrorCode.OUTPUT_DIR_REFUSED });
  });

  it('makes a chain inside home or the reports folder', async () => {
    await ensureWritableDir(join(home, 'evidence', '2026', 'incident-42'), roots);
    expect(statSync(join(home, 'evidence', '2026', 'incident-42')).isDirectory()).toBe(true);
    await ensureWritableDir(join(reports, 'x', 'y'), roots);
    expect(existsSync(join(reports, 'x', 'y'))).toBe(true);
  });

  it('judges real paths: a symlink in home that leads elsewhere does not count as home', async () => {
    mkdirSync(join(root, 'elsewhere'));
    symlinkSync(join(root, 'elsewhere'), join(home, 'link'));
    await expect(ensureWritableDir(join(home, 'link', 'p', 'q'), roots)).rejects.toMatchObject({ code: ReportErrorCode.OUTPUT_DIR_REFUSED });
    expect(existsSync(join(root, 'elsewhere', 'p'))).toBe(false);
    // A home of "/" would let every path in: it is not taken as a root.
    await expect(ensureWritableDir(join(root, 'm', 'n'), ['/'])).rejects.toMatchObject({ code: ReportErrorCode.OUTPUT_DIR_REFUSED });
  });

  it('a file in the way is still OUTPUT_UNWRITABLE naming the folder', async () => {
    writeFileSync(join(root, 'a-file'), 'x');
    await expect(ensureWritableDir(join(root, 'a-file', 'reports'), roots)).rejects.toMatchObject({ code: ReportErrorCode.OUTPUT_UNWRITABLE, details: { reason: 'ENOTDIR' } });
    await expect(ensureWritableDir(join(root, 'a-file'), roots)).rejects.toMatchObject({ code: ReportErrorCode.OUTPUT_UNWRITABLE });
  });
});
