import { z } from 'zod';

/** The error shape that crosses the contract (never a thrown exception). */
export const ContractErrorSchema = z
  .object({
    code: z.string().min(1),
    message: z.string(),
    retryable: z.boolean(),
    details: z.record(z.string(), z.unknown()).default({}),
  })
  .strict();
export type ContractError = z.infer<typeof ContractErrorSchema>;

export { BridgeErrorCode, ReportErrorCode, LogsErrorCode, AlertsErrorCode } from './codes.js';

export type InvokeResult<T> = { ok: true; data: T } | { ok: false; error: ContractError };
