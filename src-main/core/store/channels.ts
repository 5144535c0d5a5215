// Contract channels of the audit log (the store owns its chain and verifier).
import type { HandlersFor } from '../channel.js';
import type { Store } from './database.js';

export function auditChannels(store: Store): HandlersFor<'audit.list' | 'audit.verify'> {
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
    'audit.verify': () => store.audit.verify(),
  };
}
