// How a report states its audit-chain check: it says when the full walk it rests
// on ran and which rows were checked only from that walk's head.
import { describe, expect, it } from 'vitest';
import type { AuditCoverage } from '../../../../src-preload/contract/index.js';
import { chainHow } from '../../../../src-main/core/report/audit-text.js';

const base: AuditCoverage = { fromSeq: 1, toSeq: 120, headSeq: 120, headHash: 'ab'.repeat(32), chainVerified: true, chainProblem: null };
const at = Date.UTC(2026, 11, 5, 12, 0, 0);

describe('chainHow', () => {
  it('an export made before the field walked the whole chain at its build', () => {
    expect(chainHow(base)).toBe(' when the report was built');
  });

  it('a full walk through the head names its time', () => {
    expect(chainHow({ ...base, fullWalk: { throughSeq: 120, at } })).toBe(' (rows 1–120 walked in full at 2026-12-05T12:00:00Z)');
  });

  it('rows after the full walk are said to be checked from that row at the build', () => {
    expect(chainHow({ ...base, fullWalk: { throughSeq: 100, at } })).toBe(
      ' (rows 1–100 walked in full at 2026-12-05T12:00:00Z; rows 101–120 checked from that row when the report was built)',
    );
  });

  it('an empty log says so', () => {
    expect(chainHow({ ...base, headSeq: null, headHash: null, fullWalk: null })).toBe(' (the log is empty)');
  });
});
