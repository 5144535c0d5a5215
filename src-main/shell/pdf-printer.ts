import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BrowserWindow, session, type Session } from 'electron';
import { AppError, BaseErrorCode, withDeadline } from '../core/base/index.js';
import type { PdfPrinter } from '../core/ports.js';
import { ReportErrorCode } from '../core/report/index.js';

// PDF in the desktop app: Electron's own Chromium prints the report's HTML in
// a hidden window that can do nothing else — sandboxed, no Node, no
// JavaScript, its own in-memory session that grants no permission, downloads
// nothing and loads nothing but the one report file (and the data: images in
// it), no navigation, no new windows. Create it only after `app` is ready.

const PARTITION = 'gpu-console-pdf'; // no "persist:" prefix: in memory only
const DEFAULT_TIMEOUT_MS = 60_000;

let lockedSession: Session | null = null;
/** The report files being printed now: the only file URLs the session loads. */
const allowedUrls = new Set<string>();

function printSession(): Session {
  if (lockedSession) return lockedSession;
  const ses = session.fromPartition(PARTITION, { cache: false });
  ses.setPermissionRequestHandler((_wc, _permission, callback) => callback(false));
  ses.setPermissionCheckHandler(() => false);
  ses.on('will-download', (event) => event.preventDefault());
  ses.webRequest.onBeforeRequest((details, callback) => {
    callback({ cancel: !(details.url.startsWith('data:') || allowedUrls.has(details.url)) });
  });
  lockedSession = ses;
  return ses;
}

export interface ElectronPdfPrinterOptions {
  timeoutMs?: number;
  /** Parent of the private temp folder; default the OS temp dir. */
  tmpRoot?: string;
}

export class ElectronPdfPrinter implements PdfPrinter {
  private readonly timeoutMs: number;
  private readonly tmpRoot: string;

  constructor(opts: ElectronPdfPrinterOptions = {}) {
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.tmpRoot = opts.tmpRoot ?? tmpdir();
  }

  async printHtmlToPdf(html: string, signal?: AbortSignal): Promise<Buffer> {
    if (signal?.aborted) throw new AppError(BaseErrorCode.CANCELLED, 'the operation was cancelled');
    // A file rather than a data: URL: Chromium caps URL length, reports with many charts exceed it.
    const dir = await mkdtemp(join(this.tmpRoot, 'gpu-console-pdf-'));
    const file = join(dir, 'report.html');
    const url = pathToFileURL(file).href;
    let win: BrowserWindow | null = null;
    const onAbort = () => {
      if (win && !win.isDestroyed()) win.destroy();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      await writeFile(file, html, { encoding: 'utf8', mode: 0o600 });
      allowedUrls.add(url);
      win = new BrowserWindow({
        show: false,
        width: 794, // A4 at 96 dpi
        height: 1123,
        paintWhenInitiallyHidden: true,
        webPreferences: {
          session: printSession(),
          sandbox: true,
          contextIsolation: true,
          nodeIntegration: false,
          nodeIntegrationInWorker: false,
          nodeIntegrationInSubFrames: false,
          javascript: false,
          webSecurity: true,
          allowRunningInsecureContent: false,
          experimentalFeatures: false,
          webviewTag: false,
          spellcheck: false,
          images: true,
        },
      });
      const wc = win.webContents;
      wc.on('will-navigate', (event, target) => {
        if (target !== url) event.preventDefault();
      });
      wc.on('will-redirect', (event) => event.preventDefault());
      wc.on('will-attach-webview', (event) => event.preventDefault());
      wc.setWindowOpenHandler(() => ({ action: 'deny' }));

      const deadline = <T>(p: Promise<T>, step: string) =>
        withDeadline(p, this.timeoutMs, ReportErrorCode.PDF_FAILED, `${step} took longer than ${Math.round(this.timeoutMs / 1000)} s`, onAbort);
      try {
        await deadline(win.loadURL(url), 'loading the report for printing');
        if (signal?.aborted) throw new AppError(BaseErrorCode.CANCELLED, 'the operation was cancelled');
        const pdf = await deadline(wc.printToPDF({ printBackground: true, pageSize: 'A4', preferCSSPageSize: true }), 'printing the PDF');
        if (pdf.subarray(0, 5).toString('latin1') !== '%PDF-') {
          throw new AppError(ReportErrorCode.PDF_FAILED, `Electron produced something that is not a PDF (${pdf.length} bytes)`, { retryable: true });
        }
        return Buffer.from(pdf);
      } catch (err) {
        if (signal?.aborted) throw new AppError(BaseErrorCode.CANCELLED, 'the operation was cancelled');
        if (err instanceof AppError) throw err;
        throw new AppError(ReportErrorCode.PDF_FAILED, `printing the PDF failed: ${err instanceof Error ? err.message : String(err)}`, { retryable: true, cause: err });
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      allowedUrls.delete(url);
      if (win && !win.isDestroyed()) win.destroy();
      await rm(dir, { recursive: true, force: true, maxRetries: 3 });
    }
  }
}
