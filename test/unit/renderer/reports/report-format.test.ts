import { describe, expect, it } from 'vitest';
import type { Gate, ReportProgress, ReportVerifyResult } from '../../../../src-preload/contract/index.js';
import {
  countGates,
  errorAdvice,
  gateCountsText,
  hostsText,
  NO_PROGRESS,
  progressPct,
  reduceProgress,
  sizeText,
  verifyHeadline,
  wantsPassphrase,
} from '../../../../src-renderer/src/features/reports/report-format.js';

const gate = (id: string, status: Gate['status']): Gate => ({ id, label: id, kind: 'manual', status, evidence: '', note: null, markedBy: null, markedAt: null });
const ev = (exportId: string, state: ReportProgress['state'], done: number, total = 6): ReportProgress => ({ exportId, step: `step ${done}`, done, total, state, message: null });

describe('report wording', () => {
  it('counts gates by status; null (section left out) counts nothing', () => {
    const c = countGates([gate('a', 'pass'), gate('b', 'pass'), gate('c', 'fail'), gate('d', 'pending'), gate('e', 'unverified')]);
    expect(c).toEqual({ pass: 2, fail: 1, pending: 1, unverified: 1 });
    expect(gateCountsText(c)).toBe('2 pass · 1 fail · 1 pending · 1 unverified');
    expect(countGates(null)).toEqual({ pass: 0, fail: 0, pending: 0, unverified: 0 });
    expect(gateCountsText(countGates(null))).toBe('no gates');
  });

  it('words hosts and sizes', () => {
    expect(hostsText([])).toBe('all hosts');
    expect(hostsText(['a', 'b'])).toBe('a, b');
    expect(sizeText(512)).toBe('512 B');
    expect(sizeText(2048)).toBe('2.0 KiB');
    expect(sizeText(3 * 1024 * 1024)).toBe('3.0 MiB');
  });

  it('gives advice for the report error codes an operator can act on', () => {
    expect(errorAdvice('REPORT_SIGNING_KEY_ENCRYPTED')).toMatch(/passphrase/);
    expect(errorAdvice('REPORT_OUTPUT_UNWRITABLE')).toMatch(/folder/);
    expect(errorAdvice('REPORT_PDF_UNAVAILABLE')).toMatch(/untick PDF/);
    expect(errorAdvice('SOMETHING_ELSE')).toBeNull();
    expect(wantsPassphrase('REPORT_SIGNING_KEY_ENCRYPTED')).toBe(true);
    expect(wantsPassphrase('REPORT_SIGNING_KEY_PASSPHRASE_INCORRECT')).toBe(true);
    expect(wantsPassphrase('REPORT_OUTPUT_UNWRITABLE')).toBe(false);
  });
});

describe('export progress', () => {
  it('adopts the first event while its export is in flight, then follows only that export', () => {
    let s = reduceProgress(NO_PROGRESS, ev('other', 'running', 1), false);
    expect(s).toBe(NO_PROGRESS); // nothing of ours is running: another window's export is not shown
    s = reduceProgress(s, ev('mine', 'running', 0), true);
    expect(s.exportId).toBe('mine');
    s = reduceProgress(s, ev('other', 'running', 3), true);
    expect(s.last?.done).toBe(0);
    s = reduceProgress(s, ev('mine', 'done', 6), false);
    expect(s.last?.state).toBe('done');
  });

  it('turns done/total into a percentage; done is full, unknown total is empty', () => {
    expect(progressPct(null)).toBe(0);
    expect(progressPct(ev('x', 'running', 3, 6))).toBe(50);
    expect(progressPct(ev('x', 'running', 9, 6))).toBe(100);
    expect(progressPct(ev('x', 'running', 1, 0))).toBe(0);
    expect(progressPct(ev('x', 'done', 5, 6))).toBe(100);
  });
});

describe('the verify headline', () => {
  const finding = (check: string, ok: boolean) => ({ check, ok, detail: `${check} detail` });
  const result = (signature: ReportVerifyResult['signature'], findings: ReportVerifyResult['findings']): ReportVerifyResult => ({
    ok: findings.every((f) => f.ok),
    dir: '/r',
    signature,
    signer: null,
    auditChecked: true,
    findings,
  });

  it('says all OK only when the core says ok', () => {
    expect(verifyHeadline(result('valid', [finding('manifest', true), finding('signature', true)]))).toEqual({ tone: 'ok', text: 'all OK' });
  });

  it('words an unsigned export whose other checks pass as such, not as a failure count', () => {
    expect(verifyHeadline(result('missing', [finding('manifest', true), finding('signature', false)]))).toEqual({ tone: 'warn', text: 'not signed — everything else OK' });
  });

  it('counts failures otherwise, including a missing signature next to another failure', () => {
    expect(verifyHeadline(result('missing', [finding('file:report.md', false), finding('signature', false)]))).toEqual({ tone: 'error', text: '2 FAILED' });
    expect(verifyHeadline(result('invalid', [finding('manifest', true), finding('signature', false)]))).toEqual({ tone: 'error', text: '1 FAILED' });
  });
});
