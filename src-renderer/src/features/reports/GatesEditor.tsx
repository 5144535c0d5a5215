// The manual gates of the runbook (reports.gates): only a person can judge
// them. Each is marked pass / fail / pending with a note saying what was seen;
// the core records who marked it and when, and audits the change.
import type { ContractError, Gate } from '../../../../src-preload/contract/index.js';
import { GateRow } from './GateRow.js';

export interface GatesEditorProps {
  gates: readonly Gate[];
  error: ContractError | null;
  onSaved(gate: Gate): void;
}

export function GatesEditor({ gates, error, onSaved }: GatesEditorProps): React.JSX.Element {
  return (
    <section className="reports-card" aria-labelledby="reports-gates-title" data-testid="reports-gates">
      <div className="reports-card__head">
        <h2 className="panel__title reports-card__title" id="reports-gates-title">
          Manual gates
        </h2>
        <span className="muted">Checks only a person can make. Every change is written to the audit log and shows in the next report.</span>
      </div>
      {error ? (
        <p className="inline-error reports-card__pad" role="alert">
          <code>{error.code}</code> {error.message}
        </p>
      ) : null}
      {gates.length === 0 && !error ? <p className="muted panel__empty">Loading the gates…</p> : null}
      <ul className="reports-gates">
        {gates.map((g) => (
          <GateRow key={g.id} gate={g} onSaved={onSaved} />
        ))}
      </ul>
    </section>
  );
}
