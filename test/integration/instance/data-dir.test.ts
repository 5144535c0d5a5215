import { chmodSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Logger } from '../../../src-main/core/base/index.js';
import { prepareDataDir } from '../../../src-main/core/instance/index.js';
import { startTestApp } from '../../helpers/app.js';

// Issue #26 (low): an existing data folder was not tightened to 0700, though
// docs/security.md says it is. It holds the audit log, the secrets file, the
// UI token (ready.json) and the ssh control sockets.

const root = mkdtempSync(join(tmpdir(), 'gc-datadir-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function recordingLogger(lines: { msg: string; fields?: Record<string, unknown> }[]): Logger {
  const log = (msg: string, fields?: Record<string, unknown>) => void lines.push({ msg, ...(fields ? { fields } : {}) });
  const logger: Logger = { debug: log, info: log, warn: log, error: log, child: () => logger };
  return logger;
}

const modeOf = (p: string): number => statSync(p).mode & 0o777;

/** Every file and folder under `dir`, with its mode. */
function walk(dir: string): { path: string; mode: number; folder: boolean }[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isSymbolicLink()) return [];
    return e.isDirectory() ? [{ path: p, mode: modeOf(p), folder: true }, ...walk(p)] : [{ path: p, mode: modeOf(p), folder: false }];
  });
}

describe.skipIf(process.platform === 'win32')('the data folder is private to its user', () => {
  it('an existing 0755 folder is tightened to 0700 at start, with a log line; a 0700 one is left alone quietly', () => {
    const dir = join(root, 'loose');
    mkdirSync(dir, { mode: 0o755 });
    chmodSync(dir, 0o755);
    const lines: { msg: string; fields?: Record<string, unknown> }[] = [];
    prepareDataDir(dir, recordingLogger(lines));
    expect(modeOf(dir)).toBe(0o700);
    expect(lines).toEqual([{ msg: 'data folder tightened', fields: { dir, was: '0755', now: '0700' } }]);
    prepareDataDir(dir, recordingLogger(lines));
    expect(lines).toHaveLength(1);
  });

  it('a new folder is made 0700, parents included', () => {
    const dir = join(root, 'new', 'gpu-console');
    prepareDataDir(dir, recordingLogger([]));
    expect(modeOf(dir)).toBe(0o700);
  });

  it('a file where the folder should be is a coded error naming it', () => {
    const file = join(root, 'a-file');
    writeFileSync(file, 'x');
    expect(() => prepareDataDir(file, recordingLogger([]))).toThrow(expect.objectContaining({ code: 'INSTANCE_DATA_DIR_UNUSABLE', message: expect.stringContaining(file) }));
  });

  it('a console started on an existing 0775 folder tightens it, and nothing it writes there is open to group or others', async () => {
    const dir = join(root, 'console');
    mkdirSync(dir);
    chmodSync(dir, 0o775);
    writeFileSync(join(dir, 'config.yaml'), 'hosts: []\n', { mode: 0o600 });
    const lines: { msg: string; fields?: Record<string, unknown> }[] = [];
    const core = await startTestApp({ dataDir: dir, configFile: join(dir, 'config.yaml'), logger: recordingLogger(lines), home: root });
    try {
      expect(modeOf(dir)).toBe(0o700);
      expect(lines.some((l) => l.msg === 'data folder tightened' && l.fields?.['was'] === '0775')).toBe(true);
      const entries = walk(dir);
      expect(entries.map((e) => e.path)).toContain(join(dir, 'gpu-console.db'));
      const open = entries.filter((e) => (e.mode & 0o077) !== 0 && !(e.path.endsWith('.sock') || e.path.endsWith('.ctl')));
      expect(open.map((e) => `${e.path} ${e.mode.toString(8)}`)).toEqual([]);
    } finally {
      await core.dispose();
    }
  }, 30_000);
});
