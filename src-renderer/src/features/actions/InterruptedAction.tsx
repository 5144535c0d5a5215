// An action the console stopped in the middle of (crash, kill, power loss):
// which planned steps were done, which was under way when it stopped (sent,
// outcome unknown) and which never ran. The console never resumes it; the
// person reads the service's real state with Verify now and decides.
import type { ActionView, Interruption } from '../../../../src-preload/contract/index.js';
import { formatTime } from '../../format/format.js';

const OUTCOME_TEXT: Record<Interruption['steps'][number]['outcome'], string> = {
  done: 'done',
  failed: 'failed',
  unknown: 'outcome unknown',
  'not-run': 'not done',
};

export interface InterruptedActionProps {
  action: ActionView;
  /** Verify now is running for this action. */
  checking: boolean;
  /** The last Verify now call's error, if it failed. */
  problem: string | null;
  onVerify(id: string): void;
  /** In a history row: folded into a <details>, the check's verdict as its summary. */
  compact?: boolean;
}

export function InterruptedAction(props: InterruptedActionProps): React.JSX.Element | null {
  const { action, compact } = props;
  const i = action.interruption;
  if (!i) return null;
  if (!compact) return <InterruptionBody {...props} interruption={i} />;
  const verdict = i.check ? (i.check.ok ? 'checked: looks as promised' : 'checked: does NOT look as promised') : 'not checked yet';
  return (
    <details className="actions-interrupted">
      <summary>
        Interrupted — {verdict}
      </summary>
      <InterruptionBody {...props} interruption={i} />
    </details>
  );
}

function InterruptionBody({ action, checking, problem, onVerify, interruption: i }: InterruptedActionProps & { interruption: Interruption }): React.JSX.Element {
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
            {s.outcome === 'unknown' ? <span className="muted"> (under way when the console stopped)</span> : null}
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
