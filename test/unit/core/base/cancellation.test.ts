import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { AppError, BaseErrorCode, CANCELLATION_CODES, isCancellation, throwIfAborted, type ErrorCode } from '../../../../src-main/core/base/index.js';
import { codeTablesIn } from '../../../helpers/source-scan.js';

describe('isCancellation', () => {
  it('is true for every cancellation code and for platform aborts', async () => {
    for (const code of CANCELLATION_CODES) expect(isCancellation(new AppError(code, 'gone')), code).toBe(true);
    const ac = new AbortController();
    ac.abort();
    const aborted = await sleep(10, undefined, { signal: ac.signal }).catch((e: unknown) => e);
    expect(isCancellation(aborted)).toBe(true);
    expect(isCancellation(new DOMException('stopped', 'AbortError'))).toBe(true);
    let thrown: unknown = null;
    try {
      throwIfAborted(ac.signal);
    } catch (e) {
      thrown = e;
    }
    expect((thrown as AppError).code).toBe(BaseErrorCode.CANCELLED);
    expect(isCancellation(thrown)).toBe(true);
  });

  it('is false for failures, deadlines included', () => {
    const failures: unknown[] = [
      new AppError('SSH_EXEC_TIMEOUT' satisfies ErrorCode, 'slow'),
      new AppError('INTERNAL_ERROR' satisfies ErrorCode, 'bug'),
      new DOMException('late', 'TimeoutError'),
      new Error('CANCELLED'),
      Object.assign(new Error('x'), { code: 'SSH_CANCELLED' }), // a code on a foreign error is not ours
      'SSH_CANCELLED',
      null,
      undefined,
    ];
    for (const f of failures) expect(isCancellation(f), String(f)).toBe(false);
  });

  it('lists every *_CANCELLED code any errors.ts or the contract declares', () => {
    const declared = codeTablesIn(['src-main', 'src-preload'])
      .filter((t) => t.name.endsWith('ErrorCode'))
      .flatMap((t) => t.codes)
      .filter((c) => c === 'CANCELLED' || c.endsWith('_CANCELLED'));
    expect(declared.length).toBeGreaterThanOrEqual(5);
    expect([...new Set(declared)].filter((c) => !(CANCELLATION_CODES as readonly string[]).includes(c))).toEqual([]);
  });
});
