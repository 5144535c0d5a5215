import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, startConsole } from '../helpers/console-process.js';

// Ctrl-C on `npm start` reaches the console twice: the terminal signals the
// whole process group, and the parent (scripts/start.mjs, npm) forwards it
// again. That is one request to stop: a clean shutdown (exit 0, ready.json and
// the database's WAL files gone), not "SIGINT again, exiting now" and exit 1.

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('serve and signals', () => {
  beforeAll(() => assertBuilt());

  it('one Ctrl-C delivered twice within a moment shuts down cleanly', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gc-signals-'));
    dirs.push(dataDir);
    const c = await startConsole(['--demo', '--demo-traffic', 'off', '--data-dir', dataDir]);
    expect(existsSync(join(dataDir, 'ready.json'))).toBe(true);
    const exited = new Promise<number | null>((resolve) => c.child.once('exit', (code) => resolve(code)));
    // The terminal's copy and the parent's forwarded one arrive within a few milliseconds of each other.
    c.child.kill('SIGINT');
    await new Promise((r) => setTimeout(r, 3));
    c.child.kill('SIGINT');
    const code = await exited;
    expect(c.output()).not.toContain('again, exiting now');
    expect(code, c.output()).toBe(0);
    expect(existsSync(join(dataDir, 'ready.json'))).toBe(false);
  }, 60_000);
});
