import { chmodSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAppError } from '../../../src-main/core/base/index.js';
import { ReportErrorCode } from '../../../src-main/core/report/index.js';
import { renderHtml } from '../../../src-main/core/report/render-html.js';
import { CHROMIUM_ENV, ChromiumPdfPrinter, chromiumCandidates } from '../../../src-main/web/pdf-printer.js';
import { launchChromium } from '../../helpers/browser.js';
import { sampleEvidence } from '../../fixtures/report/evidence-sample.js';

// The report's HTML printed by Debian's real Chromium, and the same HTML
// opened in headless Chromium: it must load nothing, log no error and show
// every chart. Fake "browsers" (shell scripts) cover the failure paths.

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SHA = 'ab'.repeat(32);
const posix = process.platform !== 'win32';

let work: string;
const html = renderHtml(sampleEvidence(), { evidenceSha256: SHA });

/** Temp folders a printer left behind under `root`. */
const leftovers = (root: string) => readdirSync(root).filter((n) => n.startsWith('gpu-console-pdf-'));

function fakeBrowser(name: string, script: string): string {
  const file = join(work, name);
  writeFileSync(file, `#!/bin/sh\n${script}\n`);
  chmodSync(file, 0o755);
  return file;
}

async function rejection(p: Promise<unknown>): Promise<{ code: string; message: string; details: Record<string, unknown> }> {
  try {
    await p;
  } catch (err) {
    expect(isAppError(err), String(err)).toBe(true);
    return err as { code: string; message: string; details: Record<string, unknown> };
  }
  throw new Error('expected a rejection');
}

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'gc-pdf-test-'));
});

afterAll(() => {
  rmSync(work, { recursive: true, force: true });
});

describe('ChromiumPdfPrinter with a real Chromium', () => {
  it('prints the sample report to a multi-page PDF and removes its temp folder', async () => {
    const tmpRoot = mkdtempSync(join(work, 'root-'));
    const printer = new ChromiumPdfPrinter({ candidates: [CHROMIUM], tmpRoot });
    expect(printer.available()).toBe(true);
    expect(printer.binary()).toBe(CHROMIUM);
    const pdf = await printer.printHtmlToPdf(html);
    expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    const pages = (pdf.toString('latin1').match(/\/Type\s*\/Page[^s]/g) ?? []).length;
    expect(pages).toBeGreaterThanOrEqual(2);
    expect(leftovers(tmpRoot)).toEqual([]);
  }, 90_000);
});

describe('the report HTML in headless Chromium', () => {
  let browser: Browser;

  beforeAll(async () => {
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
  });

  it('loads nothing from outside, logs no error and shows every chart image', async () => {
    const file = join(work, 'report.html');
    writeFileSync(file, html);
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors: string[] = [];
    const failed: string[] = [];
    const requested: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') errors.push(`${m.type()}: ${m.text()}`);
    });
    page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
    page.on('requestfailed', (r) => failed.push(`${r.url().slice(0, 80)}: ${r.failure()?.errorText ?? ''}`));
    page.on('request', (r) => requested.push(r.url()));
    await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
    // No DOM types in this project's Node tsconfig: the page's images are described structurally.
    type Img = { complete: boolean; naturalWidth: number; alt: string; src: string };
    const images = await page.locator('img').evaluateAll((els) =>
      els.map((el) => {
        const img = el as unknown as Img;
        return { ok: img.complete && img.naturalWidth > 0, alt: img.alt, src: img.src.slice(0, 26) };
      }),
    );
    expect(errors).toEqual([]);
    expect(failed).toEqual([]);
    for (const url of requested) expect(url.startsWith('file://') || url.startsWith('data:image/svg+xml;base64,'), url.slice(0, 80)).toBe(true);
    expect(images).toHaveLength(sampleEvidence().charts.length);
    for (const img of images) {
      expect(img.ok, img.alt).toBe(true);
      expect(img.src).toBe('data:image/svg+xml;base64,');
      expect(img.alt.length).toBeGreaterThan(20);
    }
    // The badges carry their words on screen.
    const badges = await page.locator('#gates .badge').allInnerTexts();
    expect(badges.map((b) => b.replace(/^\S+\s/, ''))).toEqual(sampleEvidence().gates!.map((g) => g.status.toUpperCase()));
    await page.close();
  }, 60_000);
});

describe('ChromiumPdfPrinter failures', () => {
  it('fails with PDF_UNAVAILABLE when no browser is found, naming the paths tried and the env var', async () => {
    const candidates = [join(work, 'no-such-chromium'), join(work, 'nor-this-one')];
    const printer = new ChromiumPdfPrinter({ candidates });
    expect(printer.available()).toBe(false);
    expect(printer.binary()).toBeNull();
    const err = await rejection(printer.printHtmlToPdf(html));
    expect(err.code).toBe(ReportErrorCode.PDF_UNAVAILABLE);
    for (const c of candidates) expect(err.message).toContain(c);
    expect(err.message).toContain(CHROMIUM_ENV);
    expect(err.details).toMatchObject({ tried: candidates, env: CHROMIUM_ENV });
  });

  it('does not take a folder or a non-executable file for a browser', () => {
    const plain = join(work, 'not-executable');
    writeFileSync(plain, 'x');
    chmodSync(plain, 0o644);
    expect(new ChromiumPdfPrinter({ candidates: [work, ...(posix ? [plain] : [])] }).available()).toBe(false);
  });

  it.runIf(posix)('fails with PDF_FAILED, the exit code and the last stderr lines when the browser fails', async () => {
    const tmpRoot = mkdtempSync(join(work, 'root-'));
    const bin = fakeBrowser('failing-browser', 'echo "starting" >&2\necho "[ERROR] cannot open display" >&2\nexit 3');
    const err = await rejection(new ChromiumPdfPrinter({ candidates: [bin], tmpRoot }).printHtmlToPdf(html));
    expect(err.code).toBe(ReportErrorCode.PDF_FAILED);
    expect(err.message).toContain('exited with code 3');
    expect(err.message).toContain('[ERROR] cannot open display');
    expect(err.details).toMatchObject({ exitCode: 3, stderr: ['starting', '[ERROR] cannot open display'] });
    expect(leftovers(tmpRoot)).toEqual([]);
  });

  it.runIf(posix)('fails with PDF_FAILED when the browser writes something that is not a PDF', async () => {
    const tmpRoot = mkdtempSync(join(work, 'root-'));
    // Writes to the --print-to-pdf= path it is given.
    const bin = fakeBrowser('html-not-pdf', 'for a in "$@"; do case "$a" in --print-to-pdf=*) echo "<html>" > "${a#--print-to-pdf=}";; esac; done\nexit 0');
    const err = await rejection(new ChromiumPdfPrinter({ candidates: [bin], tmpRoot }).printHtmlToPdf(html));
    expect(err.code).toBe(ReportErrorCode.PDF_FAILED);
    expect(err.message).toContain('not a PDF');
    expect(leftovers(tmpRoot)).toEqual([]);
  });

  it.runIf(posix)('ends a browser that hangs at the deadline, helpers included, and cleans up', async () => {
    const tmpRoot = mkdtempSync(join(work, 'root-'));
    const pidFile = join(work, 'hung.pid');
    // A helper process in the background, as a browser has: the deadline must end it too.
    const bin = fakeBrowser('hanging-browser', `sleep 30 &\necho $! > "${pidFile}"\nwait`);
    const started = Date.now();
    const err = await rejection(new ChromiumPdfPrinter({ candidates: [bin], tmpRoot, timeoutMs: 500 }).printHtmlToPdf(html));
    expect(err.code).toBe(ReportErrorCode.PDF_FAILED);
    expect(err.message).toContain('took longer than');
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(existsSync(pidFile)).toBe(true);
    const helper = Number(readFileSync(pidFile, 'utf8').trim());
    expect(isAlive(helper)).toBe(false);
    expect(leftovers(tmpRoot)).toEqual([]);
  });

  it.runIf(posix)('stops when its signal is aborted', async () => {
    const tmpRoot = mkdtempSync(join(work, 'root-'));
    const bin = fakeBrowser('slow-browser', 'sleep 30');
    const ac = new AbortController();
    const printing = new ChromiumPdfPrinter({ candidates: [bin], tmpRoot }).printHtmlToPdf(html, ac.signal);
    setTimeout(() => ac.abort(), 200);
    const err = await rejection(printing);
    expect(err.code).toBe('CANCELLED');
    expect(leftovers(tmpRoot)).toEqual([]);
  });
});

describe('chromiumCandidates', () => {
  it('tries the env override first, then the usual paths of the platform', () => {
    expect(chromiumCandidates({ [CHROMIUM_ENV]: '/opt/chrome/chrome' }, 'linux').slice(0, 3)).toEqual(['/opt/chrome/chrome', '/usr/bin/chromium', '/usr/bin/chromium-browser']);
    expect(chromiumCandidates({}, 'linux')).toEqual(expect.arrayContaining(['/usr/bin/google-chrome', '/usr/bin/google-chrome-stable']));
    expect(chromiumCandidates({}, 'darwin')[0]).toBe('/Applications/Google Chrome.app/Contents/MacOS/Google Chrome');
    const win = chromiumCandidates({ PROGRAMFILES: 'C:\\Program Files' }, 'win32');
    expect(win).toContain('C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe');
    expect(win.some((p) => p.endsWith('msedge.exe'))).toBe(true);
  });
});

/** Running (a zombie, killed but not yet reaped by whoever adopted it, counts as ended). */
function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2));
  } catch {
    return true;
  }
}
