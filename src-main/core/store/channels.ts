// Contract channels of the audit log (the store owns its chain and verifier),
// and the page a broken chain sends: whoever runs the check, the on-call hears
// of it on their outside channels (event audit.verify-failed).
import type { AuditVerifyResult } from '../../../src-preload/contract/index.js';
import type { HandlersFor } from '../channel.js';
import type { Store } from './database.js';

/** Where a broken chain is reported (the notification service fits; declared here so the store does not import it). */
export interface AuditAlarm {
  notify(n: { key: string; severity: 'critical'; title: string; body: string; route: string; event: 'audit.verify-failed' }): void;
}

/** Runs the chain check; a broken chain is a critical notice (once per break point: the key folds repeats). */
export function verifyAudit(store: Store, notices: AuditAlarm | null): AuditVerifyResult {
  const result = store.audit.verify();
  if (!result.ok && notices) {
    notices.notify({
      key: `audit-verify:${result.brokenAt}`,
      severity: 'critical',
      title: 'Audit log verification failed',
      body: `The audit chain breaks at event ${result.brokenAt} (${result.reason}; the ${result.count} before it verify). Rows were changed or removed outside the console; keep the database file for investigation.`,
      route: 'audit',
      event: 'audit.verify-failed',
    });
  }
  return result;
}

export function auditChannels(store: Store, notices: AuditAlarm | null = null): HandlersFor<'audit.list' | 'audit.verify'> {
  return {
    'audit.list': ({ limit, beforeSeq }) => ({
      events: store.audit.list({ limit, beforeSeq }).map((e) => ({
        seq: e.seq,
        ts: e.ts,
        type: e.type,
        actor: e.actor,
        target: e.target,
        payload: e.payload,
        prevHash: e.prevHash,
        hash: e.hash,
      })),
    }),
    'audit.verify': () => verifyAudit(store, notices),
  };
}
