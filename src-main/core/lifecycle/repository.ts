import type Database from 'better-sqlite3';
import type { ActionView, StandingApprovalView } from '../../../src-preload/contract/index.js';
import type { TimingVariant } from './timing.js';

/** An action as kept in main: the view plus what never leaves it in full. */
export interface ActionRecord {
  view: ActionView;
  /** The nonce issued with the proposal, kept after the decision so a replay is told apart from a wrong guess. */
  issuedNonce: string;
  variant: TimingVariant;
  /** Sleep level the plan was made for (wake). */
  planLevel: 0 | 1 | 2 | null;
  durationMs: number | null;
}

export interface ActionRepository {
  save(rec: ActionRecord): void;
  get(id: string): ActionRecord | null;
  list(limit: number): ActionRecord[];
  /** Records proposed in [fromMs, toMs), oldest first (evidence reports). */
  createdBetween(fromMs: number, toMs: number): ActionRecord[];
  /** Records in one of the given states. */
  inStates(states: readonly string[]): ActionRecord[];
  /** Last measured durations of verified actions of this variant on this upstream, newest first. */
  durations(upstream: string, variant: TimingVariant, limit: number): number[];
  saveStanding(s: StandingApprovalView): void;
  getStanding(id: string): StandingApprovalView | null;
  listStanding(): StandingApprovalView[];
}

interface Row {
  view: string;
}

export function createActionRepository(db: Database.Database): ActionRepository {
  const upsert = db.prepare(
    `INSERT INTO actions (id, upstream, kind, state, created_at, updated_at, variant, duration_ms, view)
     VALUES (@id, @upstream, @kind, @state, @created_at, @updated_at, @variant, @duration_ms, @view)
     ON CONFLICT (id) DO UPDATE SET state = excluded.state, updated_at = excluded.updated_at,
       duration_ms = excluded.duration_ms, view = excluded.view`,
  );
  const one = db.prepare('SELECT view FROM actions WHERE id = ?');
  const recent = db.prepare('SELECT view FROM actions ORDER BY created_at DESC, rowid DESC LIMIT ?');
  const between = db.prepare('SELECT view FROM actions WHERE created_at >= ? AND created_at < ? ORDER BY created_at, rowid');
  const timing = db.prepare(
    `SELECT duration_ms AS d FROM actions WHERE upstream = ? AND variant = ? AND state = 'verified' AND duration_ms IS NOT NULL
     ORDER BY updated_at DESC LIMIT ?`,
  );
  const standingUpsert = db.prepare(
    `INSERT INTO standing_approvals (id, upstream, kind, granted_by, granted_at, expires_at, revoked_at, uses)
     VALUES (@id, @upstream, @kind, @grantedBy, @grantedAt, @expiresAt, @revokedAt, @uses)
     ON CONFLICT (id) DO UPDATE SET revoked_at = excluded.revoked_at, uses = excluded.uses`,
  );
  const standingOne = db.prepare('SELECT * FROM standing_approvals WHERE id = ?');
  const standingAll = db.prepare('SELECT * FROM standing_approvals ORDER BY granted_at DESC LIMIT 200');
  const toStanding = (r: Record<string, unknown>): StandingApprovalView => ({
    id: r.id as string,
    upstream: r.upstream as string,
    kind: r.kind as StandingApprovalView['kind'],
    grantedBy: r.granted_by as string,
    grantedAt: r.granted_at as number,
    expiresAt: r.expires_at as number,
    revokedAt: (r.revoked_at as number | null) ?? null,
    uses: r.uses as number,
  });
  const parse = (row: Row | undefined) => (row ? (JSON.parse(row.view) as ActionRecord) : null);
  return {
    save(rec) {
      upsert.run({
        id: rec.view.id,
        upstream: rec.view.upstream,
        kind: rec.view.kind,
        state: rec.view.state,
        created_at: rec.view.createdAt,
        updated_at: rec.view.finishedAt ?? rec.view.decidedAt ?? rec.view.createdAt,
        variant: rec.variant,
        duration_ms: rec.durationMs,
        view: JSON.stringify(rec),
      });
    },
    get: (id) => parse(one.get(id) as Row | undefined),
    list: (limit) => (recent.all(limit) as Row[]).map((r) => parse(r)!),
    createdBetween: (fromMs, toMs) => (between.all(fromMs, toMs) as Row[]).map((r) => parse(r)!),
    inStates(states) {
      const rows = db.prepare(`SELECT view FROM actions WHERE state IN (${states.map(() => '?').join(',')})`).all(...states) as Row[];
      return rows.map((r) => parse(r)!);
    },
    durations: (upstream, variant, limit) => (timing.all(upstream, variant, limit) as { d: number }[]).map((r) => r.d),
    saveStanding: (s) => standingUpsert.run(s),
    getStanding(id) {
      const r = standingOne.get(id) as Record<string, unknown> | undefined;
      return r ? toStanding(r) : null;
    },
    listStanding: () => (standingAll.all() as Record<string, unknown>[]).map(toStanding),
  };
}
