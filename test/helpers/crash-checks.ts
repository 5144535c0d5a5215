// What must hold in a console's data folder after it was killed with SIGKILL
// (issue #33 item 2), read with the console down, as its next start would find
// it: the database passes PRAGMA integrity_check, the audit chain verifies, no
// action ran twice (one lifecycle.running per action, one lifecycle.step per
// step), and the last audited budget.set is what the settings hold.
import { join } from 'node:path';
import { openStore } from '../../src-main/core/store/index.js';

export interface DeadFolderFacts {
  integrity: string[];
  chain: { ok: boolean; count: number; reason?: string };
  /** Actions left approved or running (the next start must close them as interrupted). */
  openActions: string[];
  /** `actionId: what ran twice`, empty when nothing did. */
  ranTwice: string[];
  /** The last audited fleet budget and the stored one (both null when never set). */
  budget: { audited: number | null; stored: number | null };
  /** Ids of finished exports in the database. */
  exports: { id: string; dir: string }[];
  /** Rows in the proxy's request log. */
  requests: number;
}

/** Reads the folder of a killed console (opening it recovers the WAL, as the next start would). */
export function inspectDeadFolder(dataDir: string): DeadFolderFacts {
  const store = openStore({ file: join(dataDir, 'gpu-console.db') });
  try {
    const integrity = (store.db.pragma('integrity_check') as { integrity_check: string }[]).map((r) => r.integrity_check);
    const v = store.audit.verify();
    const chain = { ok: v.ok, count: v.count, ...(v.ok ? {} : { reason: `${v.reason} at #${v.brokenAt}` }) };
    const rows = store.db
      .prepare("SELECT type, payload FROM audit_events WHERE type IN ('lifecycle.running', 'lifecycle.step', 'budget.set') ORDER BY seq")
      .all() as { type: string; payload: string }[];
    const seen = new Map<string, number>();
    let audited: number | null = null;
    for (const r of rows) {
      const p = JSON.parse(r.payload) as { actionId?: string; index?: number; scope?: string; new?: number | null };
      if (r.type === 'budget.set') {
        if (p.scope === 'fleet') audited = p.new ?? null;
        continue;
      }
      const key = r.type === 'lifecycle.running' ? `${p.actionId}: started` : `${p.actionId}: step ${p.index}`;
      seen.set(key, (seen.get(key) ?? 0) + 1);
    }
    const ranTwice = [...seen].filter(([, n]) => n > 1).map(([k, n]) => `${k} ×${n}`);
    const openActions = (store.db.prepare("SELECT id FROM actions WHERE state IN ('approved', 'running')").all() as { id: string }[]).map((r) => r.id);
    const stored = store.settings.get<{ fleet: number | null }>('budget.overrides')?.fleet ?? null;
    const exports = (store.db.prepare('SELECT id, export FROM report_exports').all() as { id: string; export: string }[]).map((r) => ({
      id: r.id,
      dir: (JSON.parse(r.export) as { dir: string }).dir,
    }));
    const requests = (store.db.prepare('SELECT count(*) AS n FROM requests').get() as { n: number }).n;
    return { integrity, chain, openActions, ranTwice, budget: { audited, stored }, exports, requests };
  } finally {
    store.close();
  }
}
