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

export const AuditVerifyResultSchema = z.union([
  z
    .object({
      ok: z.literal(true),
      count: z.number().int(),
      head: z.object({ seq: z.number().int(), hash: z.string() }).strict().nullable(),
    })
    .strict(),
  z
    .object({
      ok: z.literal(false),
      count: z.number().int(),
      brokenAt: z.number().int(),
      reason: z.string(),
      expected: z.string().optional(),
      actual: z.string().optional(),
      lastGood: z.object({ seq: z.number().int(), hash: z.string() }).strict().nullable(),
    })
    .strict(),
]);
export type AuditVerifyResult = z.infer<typeof AuditVerifyResultSchema>;
