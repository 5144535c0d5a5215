// An action the console stopped in the middle of (crash, kill, power loss):
// which planned steps were done, which was under way when it stopped (sent,
// outcome unknown) and which never ran. The console never resumes it; the
// person reads the service's real state with Verify now and decides.
import type { ActionView, Interruption } from '../../../../src-preload/contract/index.js';
import { formatTime } from '../../format/format.js';

const OUTCOME_TEXT: Record<Interruption['steps'][number]['outcome'], string> = {
  done: 'done',
  failed: 'failed',
  unknown: 'under way when the console stopped: outcome unknown',
  'not-run': 'not done',
};

export interface InterruptedActionProps {
  action: ActionView;
  /** Verify now is running for this action. */
  checking: boolean;
  /** The last Verify now call's error, if it failed. */
  problem: string | null;
  onVerify(id: string): void;
}

export function InterruptedAction({ action, checking, problem, onVerify }: InterruptedActionProps): React.JSX.Element | null {
  const i = action.interruption;
  if (!i) return null;
  return (
    <div className="actions-interrupted" data-testid="interrupted" data-action-id={action.id}>
      <p>
        The console stopped while this {action.kind} was {i.wasState === 'approved' ? 'approved but not yet started' : 'running'}
        {i.lastProgress ? ` (last: ${i.lastProgress})` : ''}. It was not resumed; found at {formatTime(i.detectedAt)}.
      </p>
      <ol className="actions-steps">
        {i.steps.map((s, n) => (
          <li key={n} data-testid="interrupted-step" data-outcome={s.outcome}>
            <span className={`badge actions-outcome--${s.outcome}`}>{OUTCOME_TEXT[s.outcome]}</span> <code>{s.text}</code>
          </li>
        ))}
      </ol>
      <button type="button" className="button" disabled={checking} onClick={() => onVerify(action.id)} data-testid={`verify-now-${action.id}`}>
        {checking ? 'Checking the service…' : 'Verify now'}
      </button>{' '}
      <span className="muted">reads the service&apos;s real state (health, sleep state, a short probe); changes nothing</span>
      {problem ? (
        <p className="inline-error" role="alert">
          {problem}
        </p>
      ) : null}
      {i.check ? (
        <div data-testid="interrupted-check" data-ok={String(i.check.ok)}>
          <strong>{i.check.ok ? `The service looks as the ${action.kind} promised` : `The service does not look as the ${action.kind} promised`}</strong>
          <span className="muted">
            {' '}
            (checked {formatTime(i.check.at)} by {i.check.by}); propose again if it still needs doing.
          </span>
          <ul>
            {i.check.observed.map((l, n) => (
              <li key={n}>{l}</li>
            ))}
          </ul>
        </div>
      ) : null}
    </div>
  );
}
