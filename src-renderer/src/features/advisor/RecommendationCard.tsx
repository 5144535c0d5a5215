// One recommendation: its title, the figures behind it, current → proposed caps, Apply… and Reject….
import { useState } from 'react';
import type { Recommendation } from '../../../../src-preload/contract/index.js';
import { useServices } from '../../app/app-context.js';
import { toContractError } from '../../transport/transport.js';
import { capsChanges } from './advice-text.js';

export function RecommendationCard({ rec, onApply, onDone }: { rec: Recommendation; onApply: () => void; onDone: () => void }): React.JSX.Element {
  const { transport } = useServices();
  const [rejecting, setRejecting] = useState(false);
  const [reason, setReason] = useState('');
  const [error, setError] = useState<string | null>(null);
  const titleId = `advice-${rec.id}`;

  const reject = (e: React.FormEvent): void => {
    e.preventDefault();
    setError(null);
    const text = reason.trim();
    transport.invoke('advisor.reject', { id: rec.id, ...(text ? { reason: text } : {}) }).then(
      () => onDone(),
      (err: unknown) => setError(toContractError(err).message),
    );
  };

  return (
    <article className="panel advice-card" aria-labelledby={titleId} data-testid={`advice-${rec.upstream}`}>
      <h4 id={titleId}>
        <code>{rec.upstream}</code>: {rec.title}
      </h4>
      <ul className="advice-card__because" aria-label="Why">
        {rec.because.map((line) => (
          <li key={line}>{line}</li>
        ))}
      </ul>
      <p>
        Caps:{' '}
        {capsChanges(rec.current, rec.proposed).map((c, i) => (
          <span key={c.key}>
            {i > 0 ? '; ' : ''}
            {c.label.toLowerCase()} {c.from} → <strong>{c.to}</strong>
          </span>
        ))}{' '}
        <span className="muted">({rec.slots} slots)</span>
      </p>
      {error ? (
        <p className="inline-error" role="alert">
          {error}
        </p>
      ) : null}
      {rejecting ? (
        <form onSubmit={reject} className="token-form">
          <input aria-label="Reason (optional)" placeholder="reason (optional)" maxLength={500} value={reason} onChange={(e) => setReason(e.target.value)} data-testid="advice-reject-reason" autoFocus />
          <button type="submit" className="button button--danger" data-testid="advice-reject-confirm">
            Reject
          </button>
          <button type="button" className="button button--ghost" onClick={() => setRejecting(false)}>
            Keep
          </button>
        </form>
      ) : (
        <div className="dialog__actions">
          <button type="button" className="button button--primary" onClick={onApply} data-testid="advice-apply">
            Apply…
          </button>
          <button type="button" className="button button--ghost" onClick={() => setRejecting(true)} data-testid="advice-reject">
            Reject…
          </button>
        </div>
      )}
    </article>
  );
}
