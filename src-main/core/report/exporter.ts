// Writes one export: the evidence (always, as evidence.json), the chosen
// renderings, manifest.json with the SHA-256 of every file, and — when a key is
// given — manifest.json.sig (SSHSIG, checkable with `ssh-keygen -Y verify`)
// with an allowed_signers file beside it.
//
// Everything is written into a hidden staging folder next to the final one and
// renamed into place only when complete, so a failure (disk full, PDF printer
// gone, signing error) never leaves a folder that looks like a finished export.
// A console killed mid-export cannot remove its staging folder: the folder's
// name carries the writer's pid, and the next export into that folder (and each
// start, for the default folder) removes staging folders whose writer is gone.
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { access, mkdir, open, readdir, realpath, rename, rm, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, parse as parsePath, relative, resolve, sep } from 'node:path';
import {
  EVIDENCE_SIGNATURE_NAMESPACE,
  MANIFEST_SCHEMA_VERSION,
  type Evidence,
  type Manifest,
  type ManifestFile,
  type ReportFormat,
} from '../../../src-preload/contract/index.js';
import { AppError } from '../base/index.js';
import type { PdfPrinter } from '../ports.js';
import { canonicalJson } from '../store/index.js';
import { ReportErrorCode, stopIfCancelled } from './errors.js';
import { renderHtml } from './render-html.js';
import { renderMarkdown } from './render-markdown.js';
import { allowedSignersLine } from './allowed-signers.js';
import type { SshSigner } from './sshsig.js';

export interface ExportFiles {
  dir: string;
  files: ManifestFile[];
  evidenceSha256: string;
  manifestSha256: string;
  signer: string | null;
}

export interface WriteExportOptions {
  evidence: Evidence;
  formats: readonly ReportFormat[];
  /** The parent folder; the export gets a folder of its own inside it. */
  parentDir: string;
  /** Name of the export's folder. */
  name: string;
  signer: SshSigner | null;
  /** Principal written to allowed_signers (who signed). */
  principal: string;
  pdf: PdfPrinter | null;
  now(): number;
  progress?(step: string): void;
  /** The caller gave up: nothing is renamed into place, the staging folder is removed. */
  signal?: AbortSignal;
  /** The writer's pid, in the staging folder's name (default this process). */
  pid?: number;
}

/** `.report-….<pid>.partial`: a staging folder and the pid of the process writing it (null: an older console's, without one). */
const STAGING = /^\.(report-.+?)(?:\.(\d+))?\.partial$/;

const stagingName = (name: string, pid: number): string => `.${name}.${pid}.partial`;

/** Whether process `pid` still runs (EPERM: it runs as someone else). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Removes the staging folders in `parentDir` left by a writer that is gone (a console killed mid-export):
 * never a finished export, never one whose writer still runs. A missing folder has none. Returns what went.
 */
export async function removeAbandonedStaging(parentDir: string, alive: (pid: number) => boolean = processAlive): Promise<string[]> {
  let names: string[];
  try {
    names = await readdir(parentDir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const gone: string[] = [];
  for (const name of names) {
    const m = STAGING.exec(name);
    if (!m) continue;
    const pid = m[2] === undefined ? null : Number(m[2]);
    if (pid !== null && alive(pid)) continue;
    await rm(join(parentDir, name), { recursive: true, force: true });
    gone.push(name);
  }
  return gone;
}

export const sha256Hex = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');

/** Writes `data` to a new file (0600) and flushes it to disk before returning: renamed into place, it is whole after a power cut too. */
async function writeDurable(path: string, data: string | Buffer): Promise<void> {
  const fh = await open(path, 'wx', 0o600);
  try {
    await fh.writeFile(data);
    await fh.datasync();
  } finally {
    await fh.close();
  }
}

/** Flushes a folder's entries (the rename into it); where a platform cannot (Windows), the rename stands as the OS left it. */
async function syncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r').catch(() => null);
  if (!fh) return;
  try {
    await fh.sync();
  } catch {
    // EISDIR / EPERM / EINVAL: no folder fsync here
  } finally {
    await fh.close();
  }
}

/** The nearest folder above `dir` (or `dir` itself) that exists, and how many levels below it are missing. */
async function nearestExisting(dir: string): Promise<{ existing: string; missing: number }> {
  let at = dir;
  let missing = 0;
  for (;;) {
    try {
      await stat(at);
      return { existing: at, missing };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT' || at === parsePath(at).root) throw err;
    }
    at = dirname(at);
    missing += 1;
  }
}

async function realOr(path: string): Promise<string> {
  return realpath(path).catch(() => resolve(path));
}

/** Whether `target` (below the existing folder `existing`) lies in one of `roots`, on real paths. */
async function isWithin(target: string, existing: string, roots: readonly string[]): Promise<boolean> {
  const real = join(await realOr(existing), relative(existing, target));
  for (const root of roots) {
    const r = await realOr(root);
    // A home of "/" would let everything in.
    if (r === parsePath(r).root) continue;
    const rel = relative(r, real);
    if (rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel))) return true;
  }
  return false;
}

/**
 * Fails early, before any slow work, when `dir` cannot take the export. The rule, as `mkdir` and ssh-keygen
 * would have it: an existing folder is used wherever it is (if writable); a missing one is created when its
 * parent exists; a chain of missing folders only inside one of `createWithin` (the operator's home, the
 * console's data folder), judged on real paths, so a typo never grows a tree of folders elsewhere.
 */
export async function ensureWritableDir(dir: string, createWithin: readonly string[] = []): Promise<void> {
  const target = resolve(dir);
  try {
    const { existing, missing } = await nearestExisting(target);
    if (missing > 1 && !(await isWithin(target, existing, createWithin))) {
      throw new AppError(
        ReportErrorCode.OUTPUT_DIR_REFUSED,
        `${target} does not exist, nor does ${dirname(target)}; the console creates a chain of folders only inside ${createWithin.join(' or ') || 'no folder'}: create ${dirname(target)} first, or choose an existing folder`,
        { details: { dir: target, missingLevels: missing } },
      );
    }
    if (missing > 0) await mkdir(target, { recursive: true, mode: 0o700 });
    const s = await stat(target);
    if (!s.isDirectory()) throw Object.assign(new Error('not a directory'), { code: 'ENOTDIR' });
    await access(target, constants.W_OK);
  } catch (err) {
    if (err instanceof AppError) throw err;
    const code = (err as NodeJS.ErrnoException).code ?? 'EIO';
    throw new AppError(ReportErrorCode.OUTPUT_UNWRITABLE, `cannot write reports into ${dir} (${code})`, { details: { dir, reason: code }, cause: err });
  }
}

export async function writeExport(o: WriteExportOptions): Promise<ExportFiles> {
  if (o.formats.includes('pdf') && !o.pdf) {
    throw new AppError(ReportErrorCode.PDF_UNAVAILABLE, 'PDF export needs a browser to print with (the desktop app, or Chromium/Chrome installed); choose md, html or json');
  }
  await ensureWritableDir(o.parentDir);
  const finalDir = join(o.parentDir, o.name);
  const staging = join(o.parentDir, stagingName(o.name, o.pid ?? process.pid));
  try {
    await stat(finalDir);
    throw new AppError(ReportErrorCode.OUTPUT_UNWRITABLE, `${finalDir} already exists`, { details: { dir: finalDir, reason: 'EEXIST' } });
  } catch (err) {
    if (err instanceof AppError) throw err;
  }
  await removeAbandonedStaging(o.parentDir).catch(() => undefined);
  await rm(staging, { recursive: true, force: true });
  try {
    await mkdir(staging, { mode: 0o700 });
  } catch (err) {
    throw new AppError(ReportErrorCode.OUTPUT_UNWRITABLE, `cannot create ${staging} (${(err as NodeJS.ErrnoException).code ?? 'EIO'})`, { cause: err });
  }

  try {
    const files: ManifestFile[] = [];
    const put = async (name: string, format: ReportFormat, data: string | Buffer) => {
      await writeDurable(join(staging, name), data);
      const bytes = typeof data === 'string' ? Buffer.byteLength(data) : data.length;
      files.push({ name, format, sizeBytes: bytes, sha256: sha256Hex(data) });
    };

    o.progress?.('evidence.json');
    const evidenceText = canonicalJson(o.evidence);
    const evidenceSha256 = sha256Hex(evidenceText);
    await put('evidence.json', 'json', evidenceText);

    if (o.formats.includes('md')) {
      o.progress?.('report.md');
      await put('report.md', 'md', renderMarkdown(o.evidence, { evidenceSha256 }));
    }
    let html: string | null = null;
    if (o.formats.includes('html') || o.formats.includes('pdf')) html = renderHtml(o.evidence, { evidenceSha256 });
    if (o.formats.includes('html')) {
      o.progress?.('report.html');
      await put('report.html', 'html', html!);
    }
    if (o.formats.includes('pdf')) {
      o.progress?.('report.pdf');
      const pdf = await o.pdf!.printHtmlToPdf(html!);
      stopIfCancelled(o.signal);
      await put('report.pdf', 'pdf', pdf);
    }

    const manifest: Manifest = {
      schema: MANIFEST_SCHEMA_VERSION,
      evidenceId: o.evidence.id,
      createdAt: o.now(),
      evidenceSha256,
      files,
      audit: o.evidence.audit,
    };
    const manifestText = canonicalJson(manifest);
    await writeDurable(join(staging, 'manifest.json'), manifestText);
    let signer: string | null = null;
    if (o.signer) {
      o.progress?.('signature');
      const sig = await o.signer.sign(Buffer.from(manifestText, 'utf8'), EVIDENCE_SIGNATURE_NAMESPACE);
      await writeDurable(join(staging, 'manifest.json.sig'), sig);
      await writeDurable(join(staging, 'allowed_signers'), `${allowedSignersLine(o.principal, o.signer.publicKeyLine)}\n`);
      signer = o.signer.fingerprint;
    }
    stopIfCancelled(o.signal);
    await syncDir(staging);
    await rename(staging, finalDir);
    await syncDir(o.parentDir);
    return { dir: finalDir, files, evidenceSha256, manifestSha256: sha256Hex(manifestText), signer };
  } catch (err) {
    await rm(staging, { recursive: true, force: true }).catch(() => undefined);
    if (err instanceof AppError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    // File-system failures (ENOSPC, EACCES, EROFS…) become one coded error; anything else keeps its own identity.
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) {
      throw new AppError(ReportErrorCode.OUTPUT_UNWRITABLE, `writing the export into ${o.parentDir} failed (${code}); nothing was kept`, { details: { dir: o.parentDir, reason: code }, cause: err });
    }
    throw err;
  }
}
