// One manual gate: status, note, Save; who marked it and when.
import { useState } from 'react';
import type { ContractError, Gate } from '../../../../src-preload/contract/index.js';
import { useServices } from '../../app/app-context.js';
import { Badge } from '../../components/Badge.js';
import { toContractError } from '../../transport/transport.js';
import { GATE_TONE } from './report-format.js';
import { formatTime } from '../../format/format.js';

type ManualStatus = 'pass' | 'fail' | 'pending';
const STATUSES: readonly ManualStatus[] = ['pending', 'pass', 'fail'];
export const NOTE_MAX = 2000;

const asManual = (s: Gate['status']): ManualStatus => (s === 'pass' || s === 'fail' ? s : 'pending');

export function GateRow({ gate, onSaved }: { gate: Gate; onSaved(gate: Gate): void }): React.JSX.Element {
  const { transport } = useServices();
  const [status, setStatus] = useState<ManualStatus>(asManual(gate.status));
  const [note, setNote] = useState(gate.note ?? '');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ContractError | null>(null);
  const [saved, setSaved] = useState(false);
  const dirty = status !== asManual(gate.status) || note !== (gate.note ?? '');
  const base = `reports-gate-${gate.id}`;

  const save = (e: React.FormEvent): void => {
    e.preventDefault();
    if (busy) return;
    setBusy(true);
    setError(null);
    setSaved(false);
    transport.invoke('reports.setGate', { id: gate.id, status, note }).then(
      (g) => {
        setBusy(false);
        setStatus(asManual(g.status));
        setNote(g.note ?? '');
        setSaved(true);
        onSaved(g);
      },
      (err: unknown) => {
        setBusy(false);
        setError(toContractError(err));
      },
    );
  };

  return (
    <li className="reports-gate" data-testid="reports-gate" data-gate-id={gate.id} data-status={gate.status}>
      <form className="reports-gate__form" noValidate onSubmit={save} aria-labelledby={`${base}-label`}>
        <div className="reports-gate__what">
          <strong id={`${base}-label`}>{gate.label}</strong>{' '}
          <Badge tone={GATE_TONE[gate.status]} testId={`${base}-badge`}>
            {gate.status}
          </Badge>
          <div className="muted reports-gate__who" data-testid={`${base}-marked`}>
            {gate.markedBy && gate.markedAt !== null ? `marked ${gate.status} by ${gate.markedBy} at ${formatTime(gate.markedAt)}` : gate.evidence}
          </div>
        </div>
        <label className="reports-field reports-gate__status">
          Status
          <select value={status} onChange={(e) => setStatus(e.target.value as ManualStatus)} data-testid={`${base}-status`}>
            {STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label className="reports-field reports-gate__note">
          Note (what was checked, what was seen)
          <textarea value={note} rows={2} maxLength={NOTE_MAX} onChange={(e) => setNote(e.target.value)} data-testid={`${base}-note`} />
        </label>
        <div className="reports-gate__save">
          <button type="submit" className="button" disabled={busy || !dirty} data-testid={`${base}-save`} aria-label={`Save ${gate.label}`}>
            {busy ? 'Saving…' : 'Save'}
          </button>
          <span role="status" className="muted">
            {saved && !dirty ? 'Saved' : dirty ? 'Unsaved' : ''}
          </span>
        </div>
      </form>
      {error ? (
        <p className="inline-error" role="alert">
          <code>{error.code}</code> {error.message}
        </p>
      ) : null}
    </li>
  );
}
