import { spawn } from 'node:child_process';
import { accessSync, constants as fsConstants, statSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, win32 } from 'node:path';
import { pathToFileURL } from 'node:url';
import { AppError, BaseErrorCode } from '../core/base/index.js';
import type { PdfPrinter } from '../core/ports.js';
import { ReportErrorCode } from '../core/report/index.js';

// PDF for the headless hosts (web bridge, CLI): the report's HTML printed by a
// Chromium or Chrome found on this machine, run headless in a private
// throw-away profile, with a deadline. The Electron shell prints with its own
// Chromium instead (shell/pdf-printer.ts); core only sees the PdfPrinter port.

export const CHROMIUM_ENV = 'GPU_CONSOLE_CHROMIUM';
export const DEFAULT_PDF_TIMEOUT_MS = 60_000;
const STDERR_KEEP_BYTES = 8192;

/** Where a browser is looked for, in order: the env override, then the usual install paths of each platform. */
export function chromiumCandidates(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string[] {
  const out: string[] = [];
  const override = env[CHROMIUM_ENV]?.trim();
  if (override) out.push(override);
  if (platform === 'darwin') {
    out.push(
      '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
      '/Applications/Chromium.app/Contents/MacOS/Chromium',
      '/Applications/Microsoft Edge.app/Contents/MacOS/Microsoft Edge',
    );
  } else if (platform === 'win32') {
    const roots = [env['PROGRAMFILES'] ?? 'C:\\Program Files', env['PROGRAMFILES(X86)'] ?? 'C:\\Program Files (x86)', env['LOCALAPPDATA']].filter(
      (r): r is string => typeof r === 'string' && r !== '',
    );
    for (const root of roots) out.push(win32.join(root, 'Google', 'Chrome', 'Application', 'chrome.exe'), win32.join(root, 'Chromium', 'Application', 'chrome.exe'));
    for (const root of roots) out.push(win32.join(root, 'Microsoft', 'Edge', 'Application', 'msedge.exe'));
  } else {
    out.push('/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome', '/usr/bin/google-chrome-stable', '/snap/bin/chromium');
  }
  return [...new Set(out)];
}

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, process.platform === 'win32' ? fsConstants.F_OK : fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export interface ChromiumPdfPrinterOptions {
  /** Browser paths to try in order (tests); default `chromiumCandidates()`. */
  candidates?: readonly string[];
  /** Deadline of one print, browser start included. */
  timeoutMs?: number;
  /** Parent of the private temp folder; default the OS temp dir. */
  tmpRoot?: string;
}

interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

export class ChromiumPdfPrinter implements PdfPrinter {
  private readonly candidates: readonly string[];
  private readonly timeoutMs: number;
  private readonly tmpRoot: string;

  constructor(opts: ChromiumPdfPrinterOptions = {}) {
    this.candidates = opts.candidates ?? chromiumCandidates();
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_PDF_TIMEOUT_MS;
    this.tmpRoot = opts.tmpRoot ?? tmpdir();
  }

  /** The browser a print would use now, or null. */
  binary(): string | null {
    return this.candidates.find(isExecutableFile) ?? null;
  }

  available(): boolean {
    return this.binary() !== null;
  }

  async printHtmlToPdf(html: string, signal?: AbortSignal): Promise<Buffer> {
    const binary = this.binary();
    if (binary === null) {
      throw new AppError(
        ReportErrorCode.PDF_UNAVAILABLE,
        `No Chromium or Chrome found to print the PDF. Tried: ${this.candidates.join(', ') || '(no paths)'}. Set ${CHROMIUM_ENV} to the browser's executable.`,
        { details: { tried: [...this.candidates], env: CHROMIUM_ENV } },
      );
    }
    if (signal?.aborted) throw new AppError(BaseErrorCode.CANCELLED, 'the operation was cancelled');
    // mkdtemp creates the folder readable by this user only; the report and the profile stay private.
    const dir = await mkdtemp(join(this.tmpRoot, 'gpu-console-pdf-'));
    try {
      const htmlFile = join(dir, 'report.html');
      const pdfFile = join(dir, 'out.pdf');
      await writeFile(htmlFile, html, { encoding: 'utf8', mode: 0o600 });
      const args = [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--disable-extensions',
        '--no-first-run',
        '--no-default-browser-check',
        `--user-data-dir=${join(dir, 'profile')}`,
        '--no-pdf-header-footer',
        `--print-to-pdf=${pdfFile}`,
        pathToFileURL(htmlFile).href,
      ];
      const r = await this.run(binary, args, signal);
      if (r.code !== 0) {
        const why = r.code === null ? `was killed (${r.signal ?? 'signal'})` : `exited with code ${r.code}`;
        throw new AppError(ReportErrorCode.PDF_FAILED, `${binary} ${why} while printing the PDF${tail(r.stderr)}`, {
          retryable: true,
          details: { binary, exitCode: r.code, signal: r.signal, stderr: lastLines(r.stderr) },
        });
      }
      let pdf: Buffer;
      try {
        pdf = await readFile(pdfFile);
      } catch (err) {
        throw new AppError(ReportErrorCode.PDF_FAILED, `${binary} exited without writing the PDF${tail(r.stderr)}`, {
          retryable: true,
          cause: err,
          details: { binary, exitCode: r.code, stderr: lastLines(r.stderr) },
        });
      }
      if (pdf.subarray(0, 5).toString('latin1') !== '%PDF-') {
        throw new AppError(ReportErrorCode.PDF_FAILED, `${binary} wrote a file that is not a PDF (${pdf.length} bytes)`, {
          retryable: true,
          details: { binary, sizeBytes: pdf.length, stderr: lastLines(r.stderr) },
        });
      }
      return pdf;
    } finally {
      await rm(dir, { recursive: true, force: true, maxRetries: 3 });
    }
  }

  private run(binary: string, args: string[], signal: AbortSignal | undefined): Promise<RunResult> {
    return new Promise<RunResult>((resolve, reject) => {
      // Its own process group on POSIX, so the deadline ends the browser's helpers too.
      const group = process.platform !== 'win32';
      const child = spawn(binary, args, { stdio: ['ignore', 'ignore', 'pipe'], detached: group, windowsHide: true });
      let stderr = '';
      let settled = false;
      let outcome: AppError | null = null;
      const kill = () => {
        try {
          if (group && child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
          else child.kill('SIGKILL');
        } catch {
          // Already gone.
        }
      };
      const timer = setTimeout(() => {
        outcome = new AppError(ReportErrorCode.PDF_FAILED, `printing the PDF took longer than ${Math.round(this.timeoutMs / 1000)} s`, {
          retryable: true,
          details: { binary, timeoutMs: this.timeoutMs },
        });
        kill();
      }, this.timeoutMs);
      const onAbort = () => {
        outcome = new AppError(BaseErrorCode.CANCELLED, 'the operation was cancelled');
        kill();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const finish = (fn: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        fn();
      };
      child.stderr?.setEncoding('utf8');
      child.stderr?.on('data', (chunk: string) => {
        stderr = (stderr + chunk).slice(-STDERR_KEEP_BYTES);
      });
      child.once('error', (err) =>
        finish(() =>
          reject(new AppError(ReportErrorCode.PDF_FAILED, `could not start ${binary}: ${err.message}`, { retryable: false, cause: err, details: { binary } })),
        ),
      );
      child.once('close', (code, sig) =>
        finish(() => {
          if (outcome) reject(outcome);
          else resolve({ code, signal: sig, stderr });
        }),
      );
    });
  }
}

function lastLines(stderr: string, n = 8): string[] {
  return stderr
    .split('\n')
    .map((l) => l.trimEnd())
    .filter((l) => l !== '')
    .slice(-n);
}

function tail(stderr: string): string {
  const lines = lastLines(stderr, 4);
  return lines.length ? `: ${lines.join(' | ')}` : '';
}
