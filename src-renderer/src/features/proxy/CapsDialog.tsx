// Edit one upstream's caps: change the numbers, review the change, confirm.
import { useState } from 'react';
import type { PoolCaps, UpstreamFigures } from '../../../../src-preload/contract/index.js';
import { useServices } from '../../app/app-context.js';
import { toContractError } from '../../transport/transport.js';

const FIELDS: ReadonlyArray<{ key: keyof PoolCaps; label: string; hint: string }> = [
  { key: 'reservedInteractive', label: 'Reserved for interactive', hint: 'slots system and batch never take' },
  { key: 'interactive', label: 'Interactive cap', hint: 'at least 1' },
  { key: 'system', label: 'System cap', hint: '' },
  { key: 'batch', label: 'Batch cap', hint: '' },
];

export function CapsDialog({ upstream, onClose }: { upstream: UpstreamFigures; onClose: () => void }): React.JSX.Element {
  const { transport } = useServices();
  const [caps, setCaps] = useState<PoolCaps>(upstream.caps);
  const [step, setStep] = useState<'edit' | 'confirm'>('edit');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const changed = FIELDS.filter((f) => caps[f.key] !== upstream.caps[f.key]);
  const invalid = FIELDS.find((f) => !Number.isInteger(caps[f.key]) || caps[f.key] < 0 || caps[f.key] > upstream.slots);

  const apply = (): void => {
    setBusy(true);
    setError(null);
    transport.invoke('proxy.setCaps', { upstream: upstream.upstream, caps }).then(
      () => onClose(),
      (err: unknown) => {
        setBusy(false);
        setStep('edit');
        setError(toContractError(err).message);
      },
    );
  };

  return (
    <div className="dialog-backdrop" role="presentation">
      <div className="dialog" role="dialog" aria-modal="true" aria-labelledby="caps-title" data-testid="caps-dialog">
        <h2 id="caps-title">
          Caps for <code>{upstream.upstream}</code> <span className="muted">({upstream.slots} slots)</span>
        </h2>
        {step === 'edit' ? (
          <div className="caps-form">
            {FIELDS.map((f) => (
              <label key={f.key} className="caps-form__row">
                <span>{f.label}</span>
                <input
                  type="number"
                  min={0}
                  max={upstream.slots}
                  value={caps[f.key]}
                  onChange={(e) => setCaps({ ...caps, [f.key]: Number(e.target.value) })}
                  data-testid={`caps-${f.key}`}
                />
                <span className="muted">{f.hint}</span>
              </label>
            ))}
          </div>
        ) : (
          <div data-testid="caps-confirm-text">
            <p>Apply these changes now? Running requests keep their slots; queued ones are dispatched under the new caps. The change is recorded in the audit log.</p>
            <ul>
              {changed.map((f) => (
                <li key={f.key}>
                  {f.label}: {upstream.caps[f.key]} → <strong>{caps[f.key]}</strong>
                </li>
              ))}
            </ul>
          </div>
        )}
        {invalid ? <p className="inline-error">{invalid.label} must be a whole number from 0 to {upstream.slots}.</p> : null}
        {error ? (
          <p className="inline-error" role="alert">
            {error}
          </p>
        ) : null}
        <div className="dialog__actions">
          <button type="button" className="button" onClick={onClose} disabled={busy}>
            Cancel
          </button>
          {step === 'edit' ? (
            <button type="button" className="button button--primary" disabled={changed.length === 0 || invalid !== undefined} onClick={() => setStep('confirm')} data-testid="caps-review">
              Review…
            </button>
          ) : (
            <button type="button" className="button button--primary" disabled={busy} onClick={apply} data-testid="caps-apply">
              Apply caps
            </button>
          )}
        </div>
      </div>
    </div>
  );
}
