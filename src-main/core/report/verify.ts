// Checks an export folder the way an auditor would: the manifest, every listed
// file's size and SHA-256, files nobody listed, evidence.json against the
// manifest, the SSHSIG signature over manifest.json (and, given an
// allowed_signers text, whether its key is trusted for our namespace) and, with
// this console's database, whether the audit chain still hashes to the head the
// export recorded. A bad export is a list of failed findings, never a throw.

import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { lstat, readdir, readFile, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type Database from 'better-sqlite3';
import { z } from 'zod';
import {
  AuditCoverageSchema,
  EVIDENCE_SCHEMA_VERSION,
  EVIDENCE_SCHEMA_VERSIONS_READ,
  EVIDENCE_SIGNATURE_NAMESPACE,
  EvidenceSchema,
  MANIFEST_SCHEMA_VERSION,
  ManifestSchema,
  type AuditCoverage,
  type Manifest,
  type ReportVerifyResult,
} from '../../../src-preload/contract/report.js';
import { AppError } from '../base/index.js';
import { canonicalJson, verifyAuditChain, type AuditVerifyResult } from '../store/index.js';
import { ReportErrorCode } from './errors.js';
import { findAllowedSigner, parseAllowedSigners } from './allowed-signers.js';
import { verifySshsig } from './sshsig.js';

export const MANIFEST_FILE = 'manifest.json';
export const SIGNATURE_FILE = 'manifest.json.sig';
export const ALLOWED_SIGNERS_FILE = 'allowed_signers';
export const EVIDENCE_FILE = 'evidence.json';
/** Files an export holds besides the ones its manifest lists. */
const UNLISTED_OK = new Set([MANIFEST_FILE, SIGNATURE_FILE, ALLOWED_SIGNERS_FILE]);
/** Names that mark a folder as an export even when its manifest is gone. */
const EXPORT_MARKERS = /^(manifest\.json(\.sig)?|evidence\.json|report\.(md|html|pdf))$/;

export interface VerifyExportOptions {
  /** This console's database, opened read-only by the caller; the audit check runs only with it. */
  db?: Database.Database | null;
  /** Text of an allowed_signers file the verifier trusts. */
  allowedSigners?: string;
  /** A missing signature fails verification (default: it is reported, not failed). */
  requireSignature?: boolean;
}

type Finding = ReportVerifyResult['findings'][number];

/**
 * Verifies the export folder at `path` (the folder or any file directly in it).
 * Throws MANIFEST_INVALID only when the path does not exist or is not inside an
 * export folder at all.
 */
export async function verifyExport(path: string, options: VerifyExportOptions = {}): Promise<ReportVerifyResult> {
  const { dir, names } = await resolveExportDir(path);
  const findings: Finding[] = [];

  const manifestBytes = await readIfFile(join(dir, MANIFEST_FILE));
  const manifest = checkManifest(manifestBytes, findings);
  if (manifest) {
    await checkFiles(dir, manifest, findings);
    findings.push(checkUnlisted(names, manifest));
    const evidence = await checkEvidence(dir, manifest);
    if (evidence) findings.push(evidence);
    findings.push(checkRecordedAudit(manifest.audit));
  }

  const sig = await checkSignature(dir, manifestBytes, options.allowedSigners, options.requireSignature ?? false);
  findings.push(...sig.findings);

  let auditChecked = false;
  if (options.db && manifest) {
    findings.push(checkAuditChain(options.db, manifest.audit));
    auditChecked = true;
  }

  return {
    ok: findings.every((f) => f.ok),
    dir,
    signature: sig.state,
    signer: sig.signer,
    auditChecked,
    findings,
  };
}

async function resolveExportDir(path: string): Promise<{ dir: string; names: string[] }> {
  const abs = resolve(path);
  let isDir: boolean;
  try {
    isDir = (await stat(abs)).isDirectory();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'EIO';
    throw new AppError(ReportErrorCode.MANIFEST_INVALID, `${abs} cannot be read (${code}); give an export folder or a file in it`, {
      details: { path: abs, reason: code },
      cause: err,
    });
  }
  const dir = isDir ? abs : dirname(abs);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? 'EIO';
    throw new AppError(ReportErrorCode.MANIFEST_INVALID, `export folder ${dir} cannot be listed (${code})`, {
      details: { path: dir, reason: code },
      cause: err,
    });
  }
  if (!names.some((n) => EXPORT_MARKERS.test(n))) {
    throw new AppError(ReportErrorCode.MANIFEST_INVALID, `${dir} is not an export folder: it holds no ${MANIFEST_FILE}`, {
      details: { path: dir },
    });
  }
  return { dir, names: names.sort() };
}

// ── manifest and files ───────────────────────────────────────────────────

function checkManifest(bytes: Buffer | null, findings: Finding[]): Manifest | null {
  const fail = (detail: string): null => {
    findings.push({ check: 'manifest', ok: false, detail });
    return null;
  };
  if (!bytes) return fail(`${MANIFEST_FILE} is missing`);
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString('utf8'));
  } catch (err) {
    return fail(`${MANIFEST_FILE} is not JSON: ${(err as Error).message}`);
  }
  const parsed = ManifestSchema.safeParse(json);
  if (!parsed.success) {
    const issues = parsed.error.issues.slice(0, 3).map((i) => `${i.path.join('.') || '(top)'}: ${i.message}`);
    return fail(`${MANIFEST_FILE} does not match ${MANIFEST_SCHEMA_VERSION}: ${issues.join('; ')}`);
  }
  findings.push({
    check: 'manifest',
    ok: true,
    detail: `${MANIFEST_FILE} is valid: evidence ${parsed.data.evidenceId}, ${parsed.data.files.length} file(s)`,
  });
  return parsed.data;
}

async function checkFiles(dir: string, manifest: Manifest, findings: Finding[]): Promise<void> {
  const seen = new Set<string>();
  for (const entry of manifest.files) {
    const check = `file:${entry.name}`;
    if (!isPlainName(entry.name) || UNLISTED_OK.has(entry.name)) {
      findings.push({ check, ok: false, detail: `the manifest lists ${JSON.stringify(entry.name)}, which is not a report file name in the export folder` });
      continue;
    }
    if (seen.has(entry.name)) {
      findings.push({ check, ok: false, detail: `${entry.name} is listed twice in the manifest` });
      continue;
    }
    seen.add(entry.name);
    const path = join(dir, entry.name);
    const kind = await fileKind(path);
    if (kind !== 'file') {
      findings.push({
        check,
        ok: false,
        detail: kind === 'missing' ? `${entry.name} is listed in the manifest but missing` : `${entry.name} is a ${kind}, not a plain file`,
      });
      continue;
    }
    let actual: { sizeBytes: number; sha256: string };
    try {
      actual = await digestFile(path);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'EIO';
      findings.push({ check, ok: false, detail: `${entry.name} cannot be read (${code})` });
      continue;
    }
    const same = actual.sizeBytes === entry.sizeBytes && actual.sha256 === entry.sha256;
    findings.push({
      check,
      ok: same,
      detail: same
        ? `${entry.name}: ${actual.sizeBytes} bytes, sha256 ${actual.sha256} as listed`
        : `${entry.name} was changed: it is ${actual.sizeBytes} bytes with sha256 ${actual.sha256}; the manifest says ${entry.sizeBytes} bytes with sha256 ${entry.sha256}`,
    });
  }
}

function checkUnlisted(names: readonly string[], manifest: Manifest): Finding {
  const listed = new Set(manifest.files.map((f) => f.name));
  const extra = names.filter((n) => !listed.has(n) && !UNLISTED_OK.has(n));
  return extra.length === 0
    ? { check: 'unlisted-files', ok: true, detail: 'the folder holds no files besides the listed ones' }
    : { check: 'unlisted-files', ok: false, detail: `not listed in the manifest: ${extra.join(', ')}` };
}

/** evidence.json against the manifest; null when the export has no evidence.json. */
async function checkEvidence(dir: string, manifest: Manifest): Promise<Finding | null> {
  if (!manifest.files.some((f) => f.name === EVIDENCE_FILE)) return null;
  const bytes = await readIfFile(join(dir, EVIDENCE_FILE));
  if (!bytes) return { check: 'evidence', ok: false, detail: `${EVIDENCE_FILE} is missing; its digest and audit block cannot be checked` };
  const problems: string[] = [];
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  if (sha256 !== manifest.evidenceSha256) {
    problems.push(`${EVIDENCE_FILE} has sha256 ${sha256}, the manifest's evidenceSha256 is ${manifest.evidenceSha256}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString('utf8'));
  } catch (err) {
    problems.push(`${EVIDENCE_FILE} is not JSON: ${(err as Error).message}`);
    return { check: 'evidence', ok: false, detail: problems.join('; ') };
  }
  const parsed = parseEvidence(json);
  if (!parsed.success) {
    const issues = parsed.error.issues.slice(0, 3).map((i) => `${i.path.join('.') || '(top)'}: ${i.message}`);
    problems.push(`${EVIDENCE_FILE} does not match ${EVIDENCE_SCHEMA_VERSION}: ${issues.join('; ')}`);
  } else {
    if (parsed.data.id !== manifest.evidenceId) {
      problems.push(`${EVIDENCE_FILE} is evidence ${parsed.data.id}, the manifest says ${manifest.evidenceId}`);
    }
    if (canonicalJson(parsed.data.audit) !== canonicalJson(manifest.audit)) {
      problems.push(`the audit block of ${EVIDENCE_FILE} differs from the manifest's`);
    }
  }
  return problems.length === 0
    ? { check: 'evidence', ok: true, detail: `${EVIDENCE_FILE} matches evidenceSha256 ${sha256}, the evidence id and the audit block` }
    : { check: 'evidence', ok: false, detail: problems.join('; ') };
}

/**
 * evidence.json of this version in full; one written under an older version
 * (signed before a change of the format) only as far as verification needs:
 * its version, id and audit block.
 */
const OlderEvidenceSchema = z
  .object({ schema: z.enum(EVIDENCE_SCHEMA_VERSIONS_READ.filter((v) => v !== EVIDENCE_SCHEMA_VERSION) as [string, ...string[]]), id: z.string(), audit: AuditCoverageSchema })
  .passthrough();

function parseEvidence(json: unknown): ReturnType<typeof OlderEvidenceSchema.safeParse> | ReturnType<typeof EvidenceSchema.safeParse> {
  const older = OlderEvidenceSchema.safeParse(json);
  return older.success ? older : EvidenceSchema.safeParse(json);
}

/** What the export says about the chain when it was built. */
function checkRecordedAudit(audit: AuditCoverage): Finding {
  return audit.chainVerified
    ? { check: 'audit-at-export', ok: true, detail: 'the audit chain verified when the export was made' }
    : {
        check: 'audit-at-export',
        ok: false,
        detail: `the audit chain did not verify when the export was made: ${audit.chainProblem ?? 'no reason recorded'}`,
      };
}

// ── signature ────────────────────────────────────────────────────────────

interface SignatureOutcome {
  state: ReportVerifyResult['signature'];
  signer: string | null;
  findings: Finding[];
}

async function checkSignature(dir: string, manifestBytes: Buffer | null, allowedSigners: string | undefined, required: boolean): Promise<SignatureOutcome> {
  const sigBytes = await readIfFile(join(dir, SIGNATURE_FILE));
  if (!sigBytes) {
    return {
      state: 'missing',
      signer: null,
      // Unsigned is a choice, not damage: the digests still catch accidental change. Only a caller that requires a signature fails it.
      findings: [{ check: 'signature', ok: !required, detail: `${SIGNATURE_FILE} is missing: the export is not signed (its digests show accidental change, not who made it)` }],
    };
  }
  if (!manifestBytes) {
    return {
      state: 'invalid',
      signer: null,
      findings: [{ check: 'signature', ok: false, detail: `there is no ${MANIFEST_FILE} for ${SIGNATURE_FILE} to cover` }],
    };
  }
  const result = verifySshsig(manifestBytes, sigBytes.toString('utf8'), EVIDENCE_SIGNATURE_NAMESPACE);
  if (!result.ok) {
    return {
      state: 'invalid',
      signer: null,
      findings: [{ check: 'signature', ok: false, detail: `${SIGNATURE_FILE} does not verify: ${result.reason}` }],
    };
  }
  const findings: Finding[] = [
    { check: 'signature', ok: true, detail: `${MANIFEST_FILE} is signed by ${result.publicKeyLine.split(' ')[0]} key ${result.fingerprint}` },
  ];
  if (allowedSigners !== undefined) {
    findings.push(signerListed('allowed-signers', 'the allowed signers given', allowedSigners, result));
  }
  const bundled = await readIfFile(join(dir, ALLOWED_SIGNERS_FILE));
  if (bundled) {
    // The export's own file proves nothing about trust; it only has to agree with the signature.
    findings.push(signerListed('bundled-allowed-signers', `the export's ${ALLOWED_SIGNERS_FILE}`, bundled.toString('utf8'), result));
  }
  return { state: 'valid', signer: result.fingerprint, findings };
}

function signerListed(check: string, where: string, text: string, signer: { publicKeyLine: string; fingerprint: string }): Finding {
  const match = findAllowedSigner(parseAllowedSigners(text), signer.publicKeyLine, EVIDENCE_SIGNATURE_NAMESPACE);
  return match
    ? { check, ok: true, detail: `signer ${signer.fingerprint} is listed in ${where} as ${match.principals.join(', ')} (line ${match.line})` }
    : { check, ok: false, detail: `signer ${signer.fingerprint} is not listed in ${where} for namespace ${EVIDENCE_SIGNATURE_NAMESPACE}` };
}

// ── audit chain ──────────────────────────────────────────────────────────

/** Recomputes the chain from row 1 to the head the export recorded (the store's own verifier); names the first row that breaks it. */
function checkAuditChain(db: Database.Database, audit: AuditCoverage): Finding {
  const fail = (detail: string): Finding => ({ check: 'audit', ok: false, detail });
  const { headSeq, headHash } = audit;
  if (headSeq === null || headHash === null) {
    if (headSeq !== null || headHash !== null) return fail('the manifest records an audit head without both its seq and its hash');
    return { check: 'audit', ok: true, detail: 'the audit log was empty when the export was made; nothing to compare' };
  }
  let result: AuditVerifyResult;
  try {
    result = verifyAuditChain(db, headSeq);
  } catch (err) {
    return fail(`the audit log cannot be read: ${(err as Error).message}`);
  }
  if (!result.ok) {
    const seq = result.brokenAt;
    switch (result.reason) {
      case 'gap': {
        const expected = Number(result.expected);
        return fail(seq > expected ? `audit row ${expected} is missing` : `audit row ${seq} is out of sequence`);
      }
      case 'prev-mismatch':
        return fail(`audit row ${seq} does not link to row ${seq - 1}: row ${seq - 1} was rewritten or row ${seq}'s prev_hash was altered`);
      case 'bad-payload':
        return fail(`audit row ${seq} has a damaged payload`);
      case 'hash-mismatch':
        return fail(`audit row ${seq} does not hash to its recorded value`);
    }
  }
  const last = result.head;
  if (!last || last.seq < headSeq) return fail(`audit row ${(last?.seq ?? 0) + 1} is missing (the export covers rows up to ${headSeq})`);
  if (last.hash !== headHash) {
    return fail(`audit rows 1–${headSeq} hash to ${last.hash}, but the export recorded ${headHash}: the log was rewritten after the export`);
  }
  return { check: 'audit', ok: true, detail: `audit rows 1–${headSeq} verify and end in the recorded head ${headHash}` };
}

// ── file helpers ─────────────────────────────────────────────────────────

function isPlainName(name: string): boolean {
  return name.length > 0 && name !== '.' && name !== '..' && basename(name) === name && !name.includes('\\') && !name.includes('\0');
}

async function fileKind(path: string): Promise<'file' | 'missing' | 'symbolic link' | 'folder' | 'special file'> {
  try {
    const s = await lstat(path);
    if (s.isFile()) return 'file';
    if (s.isSymbolicLink()) return 'symbolic link';
    return s.isDirectory() ? 'folder' : 'special file';
  } catch {
    return 'missing';
  }
}

/** The bytes of a plain file (not a link), or null when there is none. */
async function readIfFile(path: string): Promise<Buffer | null> {
  if ((await fileKind(path)) !== 'file') return null;
  try {
    return await readFile(path);
  } catch {
    return null;
  }
}

async function digestFile(path: string): Promise<{ sizeBytes: number; sha256: string }> {
  const hash = createHash('sha256');
  let sizeBytes = 0;
  for await (const chunk of createReadStream(path)) {
    const b = chunk as Buffer;
    hash.update(b);
    sizeBytes += b.length;
  }
  return { sizeBytes, sha256: hash.digest('hex') };
}
