// The audit log (newest first) and a check of its hash chain.
import { useCallback, useEffect, useState } from 'react';
import type { AuditEventView, ContractError } from '../../../../src-preload/contract/index.js';
import { useServices } from '../../app/app-context.js';
import { toContractError } from '../../transport/transport.js';
import { AuditTable } from './AuditTable.js';
import { VerifyPanel } from './VerifyPanel.js';

type ListState = { status: 'loading' } | { status: 'ready'; events: AuditEventView[] } | { status: 'error'; error: ContractError };

export function AuditView(): React.JSX.Element {
  const { transport } = useServices();
  const [list, setList] = useState<ListState>({ status: 'loading' });
  const [brokenAt, setBrokenAt] = useState<number | null>(null);

  const load = useCallback(() => {
    let cancelled = false;
    setList((prev) => (prev.status === 'ready' ? prev : { status: 'loading' }));
    transport.invoke('audit.list', { limit: 200 }).then(
      (out) => {
        if (!cancelled) setList({ status: 'ready', events: [...out.events].sort((a, b) => b.seq - a.seq) });
      },
      (error: unknown) => {
        if (!cancelled) setList({ status: 'error', error: toContractError(error) });
      },
    );
    return () => {
      cancelled = true;
    };
  }, [transport]);

  useEffect(() => load(), [load]);

  return (
    <section className="audit" aria-labelledby="audit-title">
      <div className="view-title">
        <h1 id="audit-title">Audit</h1>
        <div className="view-title__tools">
          <button type="button" className="button" onClick={() => load()} data-testid="audit-refresh">
            Refresh
          </button>
        </div>
      </div>
      <VerifyPanel onBrokenAt={setBrokenAt} />
      {list.status === 'loading' ? <p className="empty-state">Loading audit events…</p> : null}
      {list.status === 'error' ? (
        <p className="inline-error" role="alert">
          audit.list failed — {list.error.code}: {list.error.message}
        </p>
      ) : null}
      {list.status === 'ready' ? <AuditTable events={list.events} brokenAt={brokenAt} /> : null}
    </section>
  );
}
