import { z } from 'zod';

export const AuditEventViewSchema = z
  .object({
    seq: z.number().int(),
    ts: z.number(),
    type: z.string(),
    actor: z.string(),
    target: z.string().nullable(),
    payload: z.unknown(),
    prevHash: z.string(),
    hash: z.string(),
  })
  .strict();
export type AuditEventView = z.infer<typeof AuditEventViewSchema>;

/** The newest row of the chain (or of its verified part): its seq and hash. */
export const AuditHeadSchema = z.object({ seq: z.number().int(), hash: z.string() }).strict();
export type AuditHead = z.infer<typeof AuditHeadSchema>;

/** Why a row does not verify: its hash, its link to the previous row, a missing seq, a payload that is not canonical JSON. */
export const AuditBreakSchema = z.enum(['hash-mismatch', 'prev-mismatch', 'gap', 'bad-payload']);
export type AuditBreak = z.infer<typeof AuditBreakSchema>;

/** What the verifier found (core/store/audit.ts declares nothing of its own: it returns this). */
export const AuditVerifyResultSchema = z.union([
  z
    .object({
      ok: z.literal(true),
      count: z.number().int(),
      head: AuditHeadSchema.nullable(),
    })
    .strict(),
  z
    .object({
      ok: z.literal(false),
      /** Rows that verified before the break. */
      count: z.number().int(),
      /** Seq of the first row that does not verify. */
      brokenAt: z.number().int(),
      reason: AuditBreakSchema,
      /** gap: the seq expected (as a decimal string); prev-mismatch: the previous row's hash; hash-mismatch: the recomputed hash. */
      expected: z.string().optional(),
      /** The value found in the row (seq as a decimal string for a gap). */
      actual: z.string().optional(),
      lastGood: AuditHeadSchema.nullable(),
    })
    .strict(),
]);
export type AuditVerifyResult = z.infer<typeof AuditVerifyResultSchema>;
