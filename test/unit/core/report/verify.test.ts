// verifyExport on an export folder built here by hand (report files, evidence
// via canonicalJson, manifest, SSHSIG signature) next to a real SQLite store
// whose audit chain the manifest records; each kind of tampering must be named.
import { createHash, generateKeyPairSync } from 'node:crypto';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { AuditCoverage, Evidence, Manifest, ReportFormat } from '../../../../src-preload/contract/report.js';
import { FakeClock } from '../../../../src-main/core/base/index.js';
import { ReportErrorCode } from '../../../../src-main/core/report/errors.js';
import { allowedSignersLine } from '../../../../src-main/core/report/allowed-signers.js';
import { loadSigner, type FileSigner } from '../../../../src-main/core/report/sshsig.js';
import { verifyExport } from '../../../../src-main/core/report/verify.js';
import { auditHash, canonicalJson, openStore, type Store } from '../../../../src-main/core/store/index.js';
import { auditType } from '../../../helpers/audit-types.js';

const NS = 'gpu-console-evidence';
const sha256 = (b: Buffer | string): string => createHash('sha256').update(b).digest('hex');

let root: string;
let signer: FileSigner;
let otherSigner: FileSigner;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'gpu-console-verify-'));
  const keyFile = (name: string): string => {
    const file = join(root, name);
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    writeFileSync(file, privateKey.export({ type: 'sec1', format: 'pem' }), { mode: 0o600 });
    return file;
  };
  signer = await loadSigner(keyFile('signing-key'));
  otherSigner = await loadSigner(keyFile('other-key'));
  return () => rmSync(root, { recursive: true, force: true });
});

let work: string;
let exportDir: string;
let store: Store;
let dbFile: string;
let coverage: AuditCoverage;

function evidenceFor(audit: AuditCoverage, id = 'ev-0001'): Evidence {
  return {
    schema: 'gpu-console.evidence/4',
    id,
    title: 'Acceptance evidence',
    generatedAt: 1_700_000_100_000,
    generatedBy: 'operator:alice',
    console: { version: '0.1.0', mode: 'web', demo: true },
    window: { fromMs: 1_700_000_000_000, toMs: 1_700_000_100_000 },
    hosts: ['gpu-a'],
    sections: ['inventory'],
    notes: [],
    inventory: null,
    security: null,
    health: null,
    hostState: null,
    benchmarks: null,
    trafficEvaluation: null,
    cost: null,
    lifecycle: null,
    alerts: null,
    alertHistory: null,
    logExcerpts: null,
    gates: null,
    charts: [],
    audit,
  };
}

/** Writes report files, manifest and (optionally) signature into exportDir; returns the manifest. */
function writeExport(opts: { evidence?: Evidence; sign?: FileSigner | null; files?: Array<[string, ReportFormat, string]> } = {}): Manifest {
  const evidence = opts.evidence ?? evidenceFor(coverage);
  const evidenceText = canonicalJson(evidence);
  const files: Array<[string, ReportFormat, string]> = opts.files ?? [
    ['report.md', 'md', '# Acceptance evidence\n\nAll gates pass.\n'],
    ['report.html', 'html', '<!doctype html><title>Acceptance evidence</title><p>All gates pass.</p>'],
    ['evidence.json', 'json', evidenceText],
  ];
  mkdirSync(exportDir, { recursive: true });
  for (const [name, , text] of files) writeFileSync(join(exportDir, name), text);
  const manifest: Manifest = {
    schema: 'gpu-console.evidence-manifest/1',
    evidenceId: evidence.id,
    createdAt: 1_700_000_200_000,
    evidenceSha256: sha256(evidenceText),
    files: files.map(([name, format, text]) => ({ name, format, sizeBytes: Buffer.byteLength(text), sha256: sha256(text) })),
    audit: evidence.audit,
  };
  writeManifest(manifest, opts.sign === undefined ? signer : opts.sign);
  return manifest;
}

function writeManifest(manifest: Manifest, by: FileSigner | null): void {
  const text = canonicalJson(manifest);
  writeFileSync(join(exportDir, 'manifest.json'), text);
  if (by) {
    writeFileSync(join(exportDir, 'manifest.json.sig'), by.sign(Buffer.from(text), NS));
    writeFileSync(join(exportDir, 'allowed_signers'), `${allowedSignersLine('alice@example.com', by.publicKeyLine)}\n`);
  }
}

/** A second connection with the append-only triggers dropped: someone with file access. */
function tamper(sql: string, ...params: unknown[]): void {
  const raw = new Database(dbFile);
  try {
    raw.exec('DROP TRIGGER IF EXISTS audit_events_no_update; DROP TRIGGER IF EXISTS audit_events_no_delete;');
    raw.prepare(sql).run(...params);
  } finally {
    raw.close();
  }
}

/** Verifies with the database opened read-only, as the caller does. */
async function verify(path = exportDir, allowedSigners?: string) {
  const db = new Database(dbFile, { readonly: true });
  try {
    return await verifyExport(path, { db, ...(allowedSigners === undefined ? {} : { allowedSigners }) });
  } finally {
    db.close();
  }
}

const finding = (result: { findings: Array<{ check: string; ok: boolean; detail: string }> }, check: string) =>
  result.findings.find((f) => f.check === check);
const failed = (result: { findings: Array<{ check: string; ok: boolean; detail: string }> }) =>
  result.findings.filter((f) => !f.ok).map((f) => f.check);

beforeEach(() => {
  work = mkdtempSync(join(root, 'case-'));
  exportDir = join(work, 'export-2024');
  dbFile = join(work, 'gpu-console.db');
  const clock = new FakeClock(1_700_000_000_000);
  store = openStore({ file: dbFile, clock });
  for (let i = 1; i <= 6; i++) {
    clock.advance(1000);
    store.audit.append({ type: i % 2 ? 'host.connect' : auditType('action.approved'), actor: 'operator:alice', target: `gpu-${i}`, payload: { i } });
  }
  const head = store.audit.head()!;
  coverage = { fromSeq: 2, toSeq: 5, headSeq: head.seq, headHash: head.hash, chainVerified: true, chainProblem: null };
});

afterEach(() => {
  store.close();
  rmSync(work, { recursive: true, force: true });
});

describe('verifyExport: a sound export', () => {
  it('passes every check: manifest, files, evidence, signature, audit chain', async () => {
    const manifest = writeExport();
    const result = await verify(exportDir, `${allowedSignersLine('alice@example.com', signer.publicKeyLine)}\n`);
    expect(failed(result)).toEqual([]);
    expect(result).toMatchObject({ ok: true, dir: exportDir, signature: 'valid', signer: signer.fingerprint, auditChecked: true });
    expect(result.findings.map((f) => f.check)).toEqual([
      'manifest',
      'file:report.md',
      'file:report.html',
      'file:evidence.json',
      'unlisted-files',
      'evidence',
      'audit-at-export',
      'signature',
      'allowed-signers',
      'bundled-allowed-signers',
      'audit',
    ]);
    expect(finding(result, 'file:report.md')!.detail).toContain(manifest.files[0]!.sha256);
    expect(finding(result, 'allowed-signers')!.detail).toContain('alice@example.com');
    expect(finding(result, 'audit')!.detail).toContain(coverage.headHash!);
  });

  it('still verifies an export written under gpu-console.evidence/1 (before decisions and observed-time cost)', async () => {
    const v2 = evidenceFor(coverage, 'ev-old-1');
    const v1 = {
      ...v2,
      schema: 'gpu-console.evidence/1',
      sections: ['cost', 'lifecycle'],
      cost: [{ host: 'gpu-a', pricePerHourUsd: 2, reservationUsd: { value: 4, unit: 'USD', estimate: true, unavailableReason: null, basis: 'price × 2.00 h' }, outputTokens: 0, perMillionOutputUsageBased: { value: null, unit: 'USD/1M tok', estimate: true, unavailableReason: 'x', basis: '' }, perMillionOutputReservationBased: { value: null, unit: 'USD/1M tok', estimate: true, unavailableReason: 'x', basis: '' } }],
      lifecycle: { actions: [], proposed: 0, approved: 0, rejected: 0, verified: 0, failed: 0, drained: 0, aborted: 0 },
    } as unknown as Evidence;
    writeExport({ evidence: v1 });
    const result = await verify(exportDir, `${allowedSignersLine('alice@example.com', signer.publicKeyLine)}\n`);
    expect(failed(result)).toEqual([]);
    // A file claiming an unknown version, or the current version with v1's cost rows, is not let through.
    writeExport({ evidence: { ...v1, schema: 'gpu-console.evidence/9' } as unknown as Evidence });
    expect(finding(await verify(exportDir), 'evidence')).toMatchObject({ ok: false });
    writeExport({ evidence: { ...v1, schema: 'gpu-console.evidence/4' } as unknown as Evidence });
    expect(finding(await verify(exportDir), 'evidence')!.detail).toContain('does not match gpu-console.evidence/4');
  });

  it('still verifies an export written under gpu-console.evidence/2 (before host health and log excerpts)', async () => {
    const { hostState: _h, logExcerpts: _l, alertHistory: _a, ...v2 } = { ...evidenceFor(coverage, 'ev-old-2'), schema: 'gpu-console.evidence/2' };
    writeExport({ evidence: v2 as unknown as Evidence });
    expect(failed(await verify(exportDir))).toEqual([]);
  });

  it('still verifies an export written under gpu-console.evidence/3 (before the alert history)', async () => {
    const { alertHistory: _a, ...v3 } = { ...evidenceFor(coverage, 'ev-old-3'), schema: 'gpu-console.evidence/3' };
    writeExport({ evidence: v3 as unknown as Evidence });
    expect(failed(await verify(exportDir))).toEqual([]);
  });

  it('accepts a file inside the folder as the path', async () => {
    writeExport();
    const result = await verify(join(exportDir, 'report.md'));
    expect(result).toMatchObject({ ok: true, dir: exportDir });
  });

  it('still passes after the log grew past the recorded head', async () => {
    writeExport();
    store.audit.append({ type: 'report.exported', actor: 'operator:alice', payload: { dir: exportDir } });
    expect((await verify()).ok).toBe(true);
  });

  it('without a database, skips the audit check and says so', async () => {
    writeExport();
    const result = await verifyExport(exportDir, {});
    expect(result).toMatchObject({ ok: true, auditChecked: false });
    expect(finding(result, 'audit')).toBeUndefined();
  });

  it('an export of an empty audit log needs no rows', async () => {
    writeExport({ evidence: evidenceFor({ fromSeq: null, toSeq: null, headSeq: null, headHash: null, chainVerified: true, chainProblem: null }) });
    const result = await verify();
    expect(result.ok).toBe(true);
    expect(finding(result, 'audit')!.detail).toMatch(/empty/);
  });
});

describe('verifyExport: files', () => {
  it('names the file and both digests when one byte of a report changed', async () => {
    const manifest = writeExport();
    const file = join(exportDir, 'report.md');
    const bytes = readFileSync(file);
    bytes[2]! ^= 0x01;
    writeFileSync(file, bytes);
    const result = await verify();
    expect(result.ok).toBe(false);
    expect(failed(result)).toEqual(['file:report.md']);
    const detail = finding(result, 'file:report.md')!.detail;
    expect(detail).toContain('report.md');
    expect(detail).toContain(sha256(bytes));
    expect(detail).toContain(manifest.files[0]!.sha256);
    expect(result.signature).toBe('valid'); // the manifest itself is intact
  });

  it('flags a listed file that is missing', async () => {
    writeExport();
    unlinkSync(join(exportDir, 'report.html'));
    const result = await verify();
    expect(failed(result)).toEqual(['file:report.html']);
    expect(finding(result, 'file:report.html')!.detail).toBe('report.html is listed in the manifest but missing');
  });

  it('flags a file nobody listed', async () => {
    writeExport();
    writeFileSync(join(exportDir, 'report.pdf'), '%PDF-1.7 slipped in later');
    const result = await verify();
    expect(failed(result)).toEqual(['unlisted-files']);
    expect(finding(result, 'unlisted-files')!.detail).toBe('not listed in the manifest: report.pdf');
  });

  it('refuses a listed name that leaves the folder, and a listed symbolic link', async () => {
    const outside = join(work, 'outside.md');
    writeFileSync(outside, 'not part of the export');
    const manifest = writeExport();
    manifest.files.push({ name: '../outside.md', format: 'md', sizeBytes: 22, sha256: sha256('not part of the export') });
    symlinkSync(outside, join(exportDir, 'linked.md'));
    manifest.files.push({ name: 'linked.md', format: 'md', sizeBytes: 22, sha256: sha256('not part of the export') });
    writeManifest(manifest, signer);
    const result = await verify();
    expect(failed(result)).toEqual(['file:../outside.md', 'file:linked.md']);
    expect(finding(result, 'file:../outside.md')!.detail).toMatch(/not a report file name/);
    expect(finding(result, 'file:linked.md')!.detail).toBe('linked.md is a symbolic link, not a plain file');
  });
});

describe('verifyExport: manifest and evidence', () => {
  it('a folder with report files but no manifest is a failed export, not a throw', async () => {
    writeExport();
    unlinkSync(join(exportDir, 'manifest.json'));
    const result = await verify();
    expect(result).toMatchObject({ ok: false, signature: 'invalid', auditChecked: false });
    expect(finding(result, 'manifest')).toEqual({ check: 'manifest', ok: false, detail: 'manifest.json is missing' });
  });

  it('a manifest that does not match the schema', async () => {
    writeExport();
    writeFileSync(join(exportDir, 'manifest.json'), canonicalJson({ schema: 'gpu-console.evidence-manifest/1', files: [] }));
    const result = await verify();
    expect(finding(result, 'manifest')).toMatchObject({ ok: false, detail: expect.stringMatching(/does not match gpu-console\.evidence-manifest\/1: evidenceId/) });
    expect(result.signature).toBe('invalid');
  });

  it('evidence.json whose digest, id and audit block disagree with the manifest', async () => {
    const manifest = writeExport();
    // Rewrite evidence.json with another audit head and list its new digest, but keep evidenceSha256 and audit: signed again.
    const forged = canonicalJson(evidenceFor({ ...coverage, headHash: 'f'.repeat(64) }, 'ev-0002'));
    writeFileSync(join(exportDir, 'evidence.json'), forged);
    manifest.files[2] = { ...manifest.files[2]!, sizeBytes: Buffer.byteLength(forged), sha256: sha256(forged) };
    writeManifest(manifest, signer);
    const result = await verify();
    expect(failed(result)).toEqual(['evidence']);
    const detail = finding(result, 'evidence')!.detail;
    expect(detail).toContain(`evidence.json has sha256 ${sha256(forged)}, the manifest's evidenceSha256 is ${manifest.evidenceSha256}`);
    expect(detail).toContain('is evidence ev-0002, the manifest says ev-0001');
    expect(detail).toContain('the audit block of evidence.json differs');
  });

  it('reports a chain that did not verify when the export was made', async () => {
    writeExport({ evidence: evidenceFor({ ...coverage, chainVerified: false, chainProblem: 'row 3: hash-mismatch' }) });
    const result = await verify();
    expect(failed(result)).toEqual(['audit-at-export']);
    expect(finding(result, 'audit-at-export')!.detail).toContain('row 3: hash-mismatch');
  });
});

describe('verifyExport: signature', () => {
  it('a missing signature is reported, and fails only when a signature is required', async () => {
    writeExport({ sign: null });
    const result = await verify();
    expect(result).toMatchObject({ ok: true, signature: 'missing', signer: null });
    expect(finding(result, 'signature')!.detail).toContain('not signed');
    const strict = await verifyExport(exportDir, { requireSignature: true });
    expect(strict).toMatchObject({ ok: false, signature: 'missing' });
    expect(failed(strict)).toEqual(['signature']);
  });

  it('a manifest changed after signing makes the signature invalid', async () => {
    const manifest = writeExport();
    writeFileSync(join(exportDir, 'manifest.json'), canonicalJson({ ...manifest, createdAt: manifest.createdAt + 1 }));
    const result = await verify();
    expect(result).toMatchObject({ ok: false, signature: 'invalid', signer: null });
    expect(failed(result)).toEqual(['signature']);
    expect(finding(result, 'signature')!.detail).toBe('manifest.json.sig does not verify: the signature does not match the message and key');
  });

  it('a signature for another namespace is invalid', async () => {
    const manifest = writeExport();
    writeFileSync(join(exportDir, 'manifest.json.sig'), signer.sign(Buffer.from(canonicalJson(manifest)), 'file'));
    const result = await verify();
    expect(result.signature).toBe('invalid');
    expect(finding(result, 'signature')!.detail).toMatch(/namespace is "file"/);
  });

  it('a valid signature by a key the verifier does not trust', async () => {
    writeExport({ sign: otherSigner });
    const result = await verify(exportDir, `${allowedSignersLine('alice@example.com', signer.publicKeyLine)}\n`);
    expect(result).toMatchObject({ ok: false, signature: 'valid', signer: otherSigner.fingerprint });
    expect(failed(result)).toEqual(['allowed-signers']);
    expect(finding(result, 'allowed-signers')!.detail).toContain(otherSigner.fingerprint);
  });

  it('a bundled allowed_signers that does not name the signing key', async () => {
    writeExport();
    writeFileSync(join(exportDir, 'allowed_signers'), `${allowedSignersLine('mallory', otherSigner.publicKeyLine)}\n`);
    const result = await verify();
    expect(failed(result)).toEqual(['bundled-allowed-signers']);
  });
});

describe('verifyExport: audit chain', () => {
  it('names an altered row', async () => {
    writeExport();
    tamper('UPDATE audit_events SET payload = ? WHERE seq = 3', '{"i":33}');
    const result = await verify();
    expect(failed(result)).toEqual(['audit']);
    expect(finding(result, 'audit')!.detail).toBe('audit row 3 does not hash to its recorded value');
  });

  it('names a deleted row in the middle', async () => {
    writeExport();
    tamper('DELETE FROM audit_events WHERE seq = 2');
    expect(finding(await verify(), 'audit')!.detail).toBe('audit row 2 is missing');
  });

  it('names a deleted tail that leaves a shorter valid chain', async () => {
    writeExport();
    tamper('DELETE FROM audit_events WHERE seq >= 5');
    expect(finding(await verify(), 'audit')!.detail).toBe('audit row 5 is missing (the export covers rows up to 6)');
  });

  it('names a rewritten row whose own hash was recomputed, at the link it breaks', async () => {
    writeExport();
    const row = store.db.prepare('SELECT * FROM audit_events WHERE seq = 4').get() as { ts: number; type: string; actor: string; target: string; prev_hash: string };
    const payload = { i: 44 };
    tamper('UPDATE audit_events SET payload = ?, hash = ? WHERE seq = 4', canonicalJson(payload), auditHash(row.prev_hash, { ...row, seq: 4, payload }));
    expect(finding(await verify(), 'audit')!.detail).toMatch(/^audit row 5 does not link to row 4/);
  });

  it('sees a chain rewritten from some row on with every hash recomputed: the head differs', async () => {
    writeExport();
    const rows = store.db.prepare('SELECT * FROM audit_events ORDER BY seq').all() as Array<{
      seq: number;
      ts: number;
      type: string;
      actor: string;
      target: string | null;
      payload: string;
      hash: string;
    }>;
    let prev = rows[2]!.hash; // rows 1–3 stay; 4–6 are rewritten and re-chained
    for (const r of rows.slice(3)) {
      const payload = { ...(JSON.parse(r.payload) as Record<string, unknown>), rewritten: true };
      const hash = auditHash(prev, { seq: r.seq, ts: r.ts, type: r.type, actor: r.actor, target: r.target, payload });
      tamper('UPDATE audit_events SET payload = ?, prev_hash = ?, hash = ? WHERE seq = ?', canonicalJson(payload), prev, hash, r.seq);
      prev = hash;
    }
    expect(store.audit.verify().ok).toBe(true); // the store alone cannot tell
    const detail = finding(await verify(), 'audit')!.detail;
    expect(detail).toBe(`audit rows 1–6 hash to ${prev}, but the export recorded ${coverage.headHash}: the log was rewritten after the export`);
  });

  it('a database without the audit table is a failed finding, not a throw', async () => {
    writeExport();
    const empty = new Database(':memory:');
    const result = await verifyExport(exportDir, { db: empty });
    empty.close();
    expect(finding(result, 'audit')).toMatchObject({ ok: false, detail: expect.stringMatching(/^the audit log cannot be read/) });
  });
});

describe('verifyExport: not an export at all', () => {
  it('throws MANIFEST_INVALID for a path that does not exist', async () => {
    await expect(verifyExport(join(work, 'nope'), {})).rejects.toMatchObject({ code: ReportErrorCode.MANIFEST_INVALID });
  });

  it('throws MANIFEST_INVALID for a folder that holds no export files', async () => {
    const plain = join(work, 'plain');
    mkdirSync(plain);
    appendFileSync(join(plain, 'notes.txt'), 'hello');
    await expect(verifyExport(plain, {})).rejects.toMatchObject({ code: ReportErrorCode.MANIFEST_INVALID, message: expect.stringContaining(plain) });
    await expect(verifyExport(join(plain, 'notes.txt'), {})).rejects.toMatchObject({ code: ReportErrorCode.MANIFEST_INVALID });
  });
});
