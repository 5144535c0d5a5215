// A console killed in the middle of an export (kill -9, a real process) leaves
// only a hidden staging folder that names its dead writer: never a folder that
// looks finished, and the next export into that folder, or the next start for
// the default folder, removes it. A staging folder whose writer still runs is
// left alone.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { removeAbandonedStaging, writeExport } from '../../../src-main/core/report/exporter.js';
import { sampleEvidence } from '../../fixtures/report/evidence-sample.js';

const worker = join(dirname(fileURLToPath(import.meta.url)), 'export-kill-worker.ts');

/** Starts the worker, waits until its export is half written (the PDF step), then kills it with SIGKILL. */
function killMidExport(parentDir: string, name: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', worker, parentDir, name], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the worker never reached the PDF step: ${out}`));
    }, 30_000);
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('PRINTING')) child.kill('SIGKILL');
    });
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    child.on('error', reject);
    child.on('exit', (_code, signal) => {
      clearTimeout(timer);
      if (signal !== 'SIGKILL') reject(new Error(`the worker ended by itself (${signal}): ${out}`));
      else resolve(child.pid!);
    });
  });
}

describe('an export killed half-way', () => {
  it('leaves only a staging folder naming its dead writer, removed by the next export; a live writer keeps its own', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'gc-export-kill-'));
    const pid = await killMidExport(parent, 'report-killed');
    const left = readdirSync(parent);
    expect(left).toEqual([`.report-killed.${pid}.partial`]);
    // Half written: the evidence and the text renderings, no manifest.
    expect(readdirSync(join(parent, left[0]!)).sort()).toEqual(['evidence.json', 'report.html', 'report.md']);

    // A staging folder of a writer that still runs (this process) and one of an older console (no pid).
    mkdirSync(join(parent, `.report-busy.${process.pid}.partial`));
    mkdirSync(join(parent, '.report-old.partial'));
    writeFileSync(join(parent, 'notes.partial'), 'not ours');

    const done = await writeExport({ evidence: sampleEvidence(), formats: ['md'], parentDir: parent, name: 'report-next', signer: null, principal: 'test', pdf: null, now: () => 1 });
    expect(existsSync(join(done.dir, 'manifest.json'))).toBe(true);
    expect(readdirSync(parent).sort()).toEqual([`.report-busy.${process.pid}.partial`, 'notes.partial', 'report-next']);
  }, 40_000);

  it('the start-up sweep takes only dead writers’ folders, and a missing folder is no error', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'gc-export-sweep-'));
    mkdirSync(join(parent, '.report-a.111.partial'));
    mkdirSync(join(parent, '.report-b.222.partial'));
    mkdirSync(join(parent, 'report-c'));
    const gone = await removeAbandonedStaging(parent, (p) => p === 222);
    expect(gone).toEqual(['.report-a.111.partial']);
    expect(readdirSync(parent).sort()).toEqual(['.report-b.222.partial', 'report-c']);
    expect(await removeAbandonedStaging(join(parent, 'missing'))).toEqual([]);
  });
});
