// Confirm one recommendation: exactly the caps change it makes, then the proxy's audited caps change.
import { useEffect, useRef, useState } from 'react';
import { AdvisorErrorCode, type Recommendation } from '../../../../src-preload/contract/index.js';
import { useServices } from '../../app/app-context.js';
import { toContractError } from '../../transport/transport.js';
import { capsChanges } from './advice-text.js';

export function ApplyAdviceDialog({ rec, onClose }: { rec: Recommendation; onClose: (applied: boolean) => void }): React.JSX.Element {
  const { transport } = useServices();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const confirmRef = useRef<HTMLButtonElement>(null);
  useEffect(() => confirmRef.current?.focus(), []);
  const changes = capsChanges(rec.current, rec.proposed);

  const apply = (): void => {
    setBusy(true);
    setError(null);
    transport.invoke('advisor.apply', { id: rec.id }).then(
      () => onClose(true),
      (err: unknown) => {
        setBusy(false);
        const e = toContractError(err);
        setError(e.code === AdvisorErrorCode.STALE ? `${e.message}. Nothing was changed.` : e.message);
      },
    );
  };

  return (
    <div className="dialog-backdrop" role="presentation" onKeyDown={(e) => e.key === 'Escape' && !busy && onClose(false)}>
      <div className="dialog" role="dialog" aria-modal="true" aria-labelledby="advice-apply-title" aria-describedby="advice-apply-text" data-testid="advice-apply-dialog">
        <h2 id="advice-apply-title">
          Apply to <code>{rec.upstream}</code>: {rec.title}
        </h2>
        <div id="advice-apply-text">
          <p>These caps change now, as if changed by hand; running requests keep their slots. The change and this advice are recorded in the audit log.</p>
          <ul data-testid="advice-apply-changes">
            {changes.map((c) => (
              <li key={c.key}>
                {c.label}: {c.from} → <strong>{c.to}</strong>
              </li>
            ))}
          </ul>
        </div>
        {error ? (
          <p className="inline-error" role="alert">
            {error}
          </p>
        ) : null}
        <div className="dialog__actions">
          <button type="button" className="button" onClick={() => onClose(false)} disabled={busy}>
            Cancel
          </button>
          <button ref={confirmRef} type="button" className="button button--primary" onClick={apply} disabled={busy || error !== null} data-testid="advice-apply-confirm">
            Apply caps
          </button>
        </div>
      </div>
    </div>
  );
}
