// Contract channels of the audit log (the store owns its chain and verifier),
// and the page a broken chain sends: whoever runs the check, the on-call hears
// of it on their outside channels (event audit.verify-failed).
import type { AuditVerifyResult } from '../../../src-preload/contract/index.js';
import type { Disposable } from '../base/index.js';
import type { EventSink, HandlersFor } from '../channel.js';
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

/** The data folder's health, read once by a view that opens; changes arrive as `storage.health`. */
export function storageChannels(store: Store): HandlersFor<'storage.status'> {
  return { 'storage.status': () => store.health.current() };
}

/** Pushes each change of the data folder's health (a writer failing, space back) to the UI. */
export function publishStorageHealth(store: Store, emit: EventSink): Disposable {
  return store.health.onDidChange((view) => emit('storage.health', view));
}
