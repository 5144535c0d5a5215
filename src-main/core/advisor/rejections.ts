// Rejected advice, kept in the store's settings so a restart does not bring it
// back. A rejection holds while the advice is the same (upstream, kind, caps
// it starts from, caps it proposes) and its deciding figure stays within 20 %
// of what it was; a row that cannot be read is logged and kept as it was.
import { z } from 'zod';
import { PoolCapsSchema, RecommendationKindSchema, type PoolCaps, type Recommendation } from '../../../src-preload/contract/index.js';
import { toAppError, type Logger } from '../base/index.js';
import type { SettingsRepository } from '../store/index.js';

export const REJECTIONS_SETTING = 'advisor.rejections';
/** How far the deciding figure must move (either way) before rejected advice is shown again. */
export const MATERIAL_CHANGE = 0.2;
const MAX_ROWS = 500;
const MAX_AGE_MS = 30 * 86_400_000;

const RejectionSchema = z
  .object({
    id: z.string(),
    upstream: z.string(),
    kind: RecommendationKindSchema,
    current: PoolCapsSchema,
    proposed: PoolCapsSchema,
    deciding: z.number().finite(),
    at: z.number(),
    actor: z.string(),
    reason: z.string().optional(),
  })
  .strict();
export type Rejection = z.infer<typeof RejectionSchema>;

const sameCaps = (a: PoolCaps, b: PoolCaps): boolean =>
  a.reservedInteractive === b.reservedInteractive && a.interactive === b.interactive && a.system === b.system && a.batch === b.batch;

export class Rejections {
  private rows: Rejection[] = [];
  private unreadable: unknown[] = [];

  constructor(
    private readonly settings: SettingsRepository,
    private readonly logger: Logger,
  ) {
    this.load();
  }

  /** The rejection that still holds for this advice, or null (none, or its figure moved 20 % or more). */
  holding(rec: Pick<Recommendation, 'upstream' | 'kind' | 'current' | 'proposed'>, deciding: number): Rejection | null {
    for (let i = this.rows.length - 1; i >= 0; i--) {
      const r = this.rows[i]!;
      if (r.upstream !== rec.upstream || r.kind !== rec.kind || !sameCaps(r.current, rec.current) || !sameCaps(r.proposed, rec.proposed)) continue;
      const moved = Math.abs(deciding - r.deciding) / Math.max(1, Math.abs(r.deciding));
      return moved < MATERIAL_CHANGE ? r : null;
    }
    return null;
  }

  add(row: Rejection, now: number): void {
    this.rows = this.rows.filter((r) => now - r.at <= MAX_AGE_MS);
    this.rows.push(row);
    if (this.rows.length > MAX_ROWS) this.rows.splice(0, this.rows.length - MAX_ROWS);
    this.settings.set(REJECTIONS_SETTING, [...this.unreadable, ...this.rows]);
  }

  private load(): void {
    let stored: unknown;
    try {
      stored = this.settings.get<unknown>(REJECTIONS_SETTING) ?? [];
    } catch (err) {
      // Not JSON at all: nothing can be kept aside row by row; the next rejection writes a fresh list.
      this.logger.warn('ignoring the unreadable advisor rejections setting', { setting: REJECTIONS_SETTING, error: toAppError(err).message });
      return;
    }
    for (const row of Array.isArray(stored) ? stored : [stored]) {
      const parsed = RejectionSchema.safeParse(row);
      if (parsed.success) this.rows.push(parsed.data);
      else {
        this.unreadable.push(row);
        this.logger.warn('kept an unreadable advisor rejection aside', { setting: REJECTIONS_SETTING, issue: parsed.error.issues[0]?.message ?? 'invalid' });
      }
    }
  }
}
