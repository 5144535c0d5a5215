import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Api } from '../../../src-main/core/api.js';
import type { App } from '../../../src-main/core/app.js';
import { silentLogger } from '../../../src-main/core/base/index.js';
import { startWebBridge, type WebBridge } from '../../../src-main/web/index.js';
import { startDemoConsole, type DemoConsole } from '../../helpers/demo-console.js';
import { until } from '../../helpers/until.js';

// Cancellation crosses the bridge: a client that goes away during a report
// export (a closed tab, an aborted fetch, a Ctrl-C'd CLI) stops the export —
// no folder is left, nothing is listed, and the audit says it was cancelled.

let dir: string;
let app: App;
let c: DemoConsole | undefined;
let api: Api;
let bridge: WebBridge;
let printing: (() => void) | null = null;
const printed: number[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gc-cancel-'));
  // A PDF printer that takes its time: the export is mid-way when the client leaves.
  const slowPdf = {
    printHtmlToPdf: () =>
      new Promise<Buffer>((resolve) => {
        printing?.();
        setTimeout(() => {
          printed.push(Date.now());
          resolve(Buffer.from('%PDF-1.4\n%%EOF\n'));
        }, 1_500);
      }),
  };
  c = await startDemoConsole({ dataDir: dir, pdfPrinter: slowPdf });
  app = c.app;
  api = c.api;
  bridge = await startWebBridge({ api, rendererDir: dir, port: 0, logger: silentLogger });
}, 60_000);

afterAll(async () => {
  await bridge?.close();
  await c?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

function post(channel: string, body: unknown): { abort(): void; done: Promise<number | 'aborted'> } {
  let req: ReturnType<typeof httpRequest>;
  const done = new Promise<number | 'aborted'>((resolve) => {
    req = httpRequest(
      {
        host: '127.0.0.1',
        port: bridge.port,
        method: 'POST',
        path: `/api/${channel}`,
        headers: { host: `127.0.0.1:${bridge.port}`, 'content-type': 'application/json', 'x-gpu-console-token': bridge.token },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', () => resolve('aborted'));
    req.end(JSON.stringify(body));
  });
  return { abort: () => req.destroy(), done };
}

describe('cancelling a report export', () => {
  it('stops the export when the web client goes away: no folder, not listed, audited as cancelled', async () => {
    const outDir = join(dir, 'exports');
    const now = Date.now();
    const started = new Promise<void>((resolve) => (printing = resolve));
    const call = post('reports.export', { request: { fromMs: now - 3_600_000, toMs: now, live: false }, formats: ['md', 'pdf'], outDir });
    await started;
    call.abort();
    expect(await call.done).toBe('aborted');
    // The printer finishes its page; the export must then stop instead of renaming the folder into place.
    // Its end is the audit row (written after the staging folder is removed); a loaded machine takes longer.
    await until(() => app.store.audit.list({ type: 'report.export.failed' }).length > 0, { timeoutMs: 15_000 });
    expect(printed.length).toBe(1);
    expect(existsSync(outDir) ? readdirSync(outDir) : []).toEqual([]);
    const list = await api.invoke('reports.list', { limit: 10 });
    expect(list).toMatchObject({ ok: true, data: { exports: [] } });
    const failed = app.store.audit.list({ type: 'report.export.failed' });
    expect(failed[0]).toMatchObject({ payload: { code: 'REPORT_CANCELLED' } });
    // The console goes on: the next export runs to the end.
    const next = post('reports.export', { request: { fromMs: now - 3_600_000, toMs: now, live: false }, formats: ['md'], outDir });
    expect(await next.done).toBe(200);
    expect(readdirSync(outDir)).toHaveLength(1);
  }, 30_000);
});
