// Silence a rule for a while — a maintenance window. Preselected from the
// alert it was opened on: its rule and its host, service or model; a duration
// from a list or typed in; a reason is required (it goes in the audit log
// with who set it). The core's refusals show by their code. Cancel has the
// focus and Escape backs out: nothing is recorded until Silence is pressed.
import { useState } from 'react';
import { AlertKindSchema, SILENCE_MAX_MS, SILENCE_MIN_MS, type Alert, type Silence } from '../../../../src-preload/contract/index.js';
import { useServices } from '../../app/app-context.js';
import { useDialogDismiss } from '../../app/use-dialog.js';
import { toContractError } from '../../transport/transport.js';
import { alertKindLabel } from '../host/alert-list-state.js';
import { DURATIONS, silenceRequest, type ScopeChoice } from './silence-form.js';

export function SilenceDialog({ alert, onClose, onSilenced }: { alert: Alert; onClose: () => void; onSilenced?: (s: Silence) => void }): React.JSX.Element {
  const { transport } = useServices();
  const cancelRef = useDialogDismiss(onClose);
  const [rule, setRule] = useState<string>(alert.kind);
  const [scope, setScope] = useState<ScopeChoice>(alert.serviceId ? 'service' : 'host');
  const [duration, setDuration] = useState<string>('2h');
  const [customMinutes, setCustomMinutes] = useState('90');
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const request = silenceRequest({ alert, rule, scope, duration, customMinutes, reason });

  const submit = (): void => {
    if (!request.ok) return;
    setBusy(true);
    setError(null);
    transport.invoke('alerts.silence', request.input).then(
      (s) => {
        onSilenced?.(s);
        onClose();
      },
      (err: unknown) => {
        const e = toContractError(err);
        setBusy(false);
        setError(`${e.code}: ${e.message}`);
      },
    );
  };

  const scopes: { value: ScopeChoice; label: string; hidden: boolean }[] = [
    { value: 'host', label: `host ${alert.host}`, hidden: false },
    { value: 'service', label: `service ${alert.host}/${alert.serviceId ?? ''}`, hidden: alert.serviceId === null },
    { value: 'model', label: `model ${alert.model ?? ''} (every host)`, hidden: alert.model === null },
  ];

  return (
    <div className="dialog-backdrop" role="presentation">
      <form
        className="dialog silence-dialog"
        role="dialog"
        aria-modal="true"
        aria-labelledby="silence-title"
        data-testid="silence-dialog"
        onSubmit={(e) => {
          e.preventDefault();
          submit();
        }}
      >
        <h2 id="silence-title">Silence {alertKindLabel(alert.kind).toLowerCase()} on {alert.host}?</h2>
        <p className="muted">Its alerts are still raised, listed and audited, but do not page until the silence ends. It ends by itself.</p>
        <label className="silence-dialog__field">
          <span>Rule</span>
          <select value={rule} onChange={(e) => setRule(e.target.value)} data-testid="silence-rule">
            {AlertKindSchema.options.map((k) => (
              <option key={k} value={k}>
                {alertKindLabel(k)}
              </option>
            ))}
            <option value="all">Every rule</option>
          </select>
        </label>
        <fieldset className="silence-dialog__field">
          <legend>Scope</legend>
          {scopes
            .filter((s) => !s.hidden)
            .map((s) => (
              <label key={s.value}>
                <input type="radio" name="silence-scope" value={s.value} checked={scope === s.value} onChange={() => setScope(s.value)} data-testid={`silence-scope-${s.value}`} /> {s.label}
              </label>
            ))}
        </fieldset>
        <fieldset className="silence-dialog__field">
          <legend>For</legend>
          {DURATIONS.map((d) => (
            <label key={d.value}>
              <input type="radio" name="silence-duration" value={d.value} checked={duration === d.value} onChange={() => setDuration(d.value)} data-testid={`silence-for-${d.value}`} /> {d.label}
            </label>
          ))}
          {duration === 'custom' ? (
            <label>
              minutes{' '}
              <input
                type="number"
                min={SILENCE_MIN_MS / 60_000}
                max={SILENCE_MAX_MS / 60_000}
                value={customMinutes}
                onChange={(e) => setCustomMinutes(e.target.value)}
                data-testid="silence-custom-minutes"
              />
            </label>
          ) : null}
        </fieldset>
        <label className="silence-dialog__field">
          <span>Reason (required; recorded with your name in the audit log)</span>
          <input value={reason} maxLength={500} onChange={(e) => setReason(e.target.value)} data-testid="silence-reason" aria-required="true" />
        </label>
        {!request.ok && request.problem ? (
          <p className="muted" data-testid="silence-problem">
            {request.problem}
          </p>
        ) : null}
        {error ? (
          <p className="inline-error" role="alert" data-testid="silence-error">
            {error}
          </p>
        ) : null}
        <div className="dialog__actions">
          <button type="button" className="button" onClick={onClose} ref={cancelRef} disabled={busy} data-testid="silence-cancel">
            Cancel
          </button>
          <button type="submit" className="button button--primary" disabled={!request.ok || busy} data-testid="silence-submit">
            Silence
          </button>
        </div>
      </form>
    </div>
  );
}
