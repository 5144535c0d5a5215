// Two OS processes append to one database file at the same time: the IMMEDIATE
// transaction around "read head + insert" must serialise them into one chain.
import { describe, it, expect } from 'vitest';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openStore } from '../../../src-main/core/store/index.js';

const worker = join(dirname(fileURLToPath(import.meta.url)), 'append-worker.ts');

function runWorker(file: string, count: number, name: string, startAt: number): Promise<{ code: number | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', worker, file, String(count), name, String(startAt)], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, stderr }));
  });
}

describe('audit append across processes', () => {
  it('never forks the chain and loses no event', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gpu-console-concurrent-'));
    try {
      const file = join(dir, 'gpu-console.db');
      openStore({ file }).close(); // migrate once, so the workers race only on appends
      // Both start appending at the same instant, once both have loaded (tsx start-up takes a while).
      const startAt = Date.now() + 3000;
      const results = await Promise.all([runWorker(file, 1000, 'a', startAt), runWorker(file, 1000, 'b', startAt)]);
      expect(results).toEqual([
        { code: 0, stderr: '' },
        { code: 0, stderr: '' },
      ]);
      const store = openStore({ file });
      try {
        expect(store.audit.verify()).toMatchObject({ ok: true, count: 2000 });
        const actors = store.db.prepare('SELECT actor, count(*) AS n FROM audit_events GROUP BY actor ORDER BY actor').all();
        expect(actors).toEqual([
          { actor: 'system:a', n: 1000 },
          { actor: 'system:b', n: 1000 },
        ]);
      } finally {
        store.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
