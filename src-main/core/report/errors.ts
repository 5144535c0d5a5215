import { ReportErrorCode } from '../../../src-preload/contract/index.js';
import { AppError } from '../base/index.js';

// The report's codes are declared in the contract (src-preload/contract/codes.ts):
// the Reports view matches them (its advice, the passphrase field).
export { ReportErrorCode };

/** Throws REPORT_CANCELLED once the caller gave up (checked between the steps of a build or export). */
export function stopIfCancelled(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new AppError(ReportErrorCode.CANCELLED, 'the report was cancelled');
}

declare module '../base/index.js' {
  interface ErrorCodeRegistry {
    report: ReportErrorCode;
  }
}
