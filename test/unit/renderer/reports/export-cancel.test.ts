import { describe, expect, it } from 'vitest';
import type { ReportProgress } from '../../../../src-preload/contract/index.js';
import { cancelView } from '../../../../src-renderer/src/features/reports/export-cancel.js';
import { NO_PROGRESS, reduceProgress } from '../../../../src-renderer/src/features/reports/report-format.js';

const ev = (state: ReportProgress['state'], step: string, message: string | null = null): ReportProgress => ({ exportId: 'r1', step, done: 2, total: 5, state, message });

describe('what the export panel says after Cancel', () => {
  it('says "cancelled" only once the export reported its end, or when none of its events had arrived', () => {
    expect(cancelView(NO_PROGRESS, false)).toBe('cancelled');
    const running = reduceProgress(NO_PROGRESS, ev('running', 'writing report.pdf'), true);
    expect(cancelView(running, false)).toBe('stopping');
    const stopped = reduceProgress(running, ev('failed', 'failed', 'REPORT_CANCELLED: the report was cancelled'), false);
    expect(cancelView(stopped, false)).toBe('cancelled');
    // Whatever ended it, a failed export left no folder.
    expect(cancelView(reduceProgress(running, ev('failed', 'failed', 'REPORT_PDF_FAILED: x'), false), false)).toBe('cancelled');
  });

  it('keeps an export that finished before the cancel reached the core, and gives up waiting at the deadline', () => {
    const running = reduceProgress(NO_PROGRESS, ev('running', 'writing report.md'), true);
    expect(cancelView(reduceProgress(running, ev('done', 'done', '/data/reports/r1'), false), false)).toBe('finished');
    expect(cancelView(running, true)).toBe('unconfirmed');
    // A late end still wins over the deadline.
    expect(cancelView(reduceProgress(running, ev('failed', 'failed'), false), true)).toBe('cancelled');
  });
});
