// What reports.verify found: one line per check, each with a word (OK / FAIL)
// as well as a colour, and the signature state.
import { Badge } from '../../components/Badge.js';
import { errorAdvice, verifyHeadline } from './report-format.js';
import type { VerifyState } from './use-verify.js';

export function VerifyFindings({ state, testId }: { state: VerifyState; testId: string }): React.JSX.Element | null {
  if (state.status === 'idle') return null;
  if (state.status === 'running')
    return (
      <p className="muted reports-verify" role="status" data-testid={testId} data-state="running">
        Verifying…
      </p>
    );
  if (state.status === 'error') {
    const advice = errorAdvice(state.error.code);
    return (
      <div className="reports-verify" role="alert" data-testid={testId} data-state="error">
        <p className="inline-error">
          <code>{state.error.code}</code> {state.error.message}
        </p>
        {advice ? <p className="muted">{advice}</p> : null}
      </div>
    );
  }
  const r = state.result;
  const head = verifyHeadline(r);
  return (
    <div className="reports-verify" data-testid={testId} data-state="done" data-ok={r.ok ? 'true' : 'false'} aria-live="polite">
      <p className="reports-verify__head">
        <Badge tone={head.tone} testId={`${testId}-headline`}>
          {head.text}
        </Badge>{' '}
        <span>
          {r.findings.length} checks · signature {r.signature}
          {r.signer ? (
            <>
              {' '}
              by <code>{r.signer}</code>
            </>
          ) : null}
          {r.auditChecked ? ' · audit chain checked against this console' : ' · audit chain not checked'}
        </span>
      </p>
      <ul className="reports-findings">
        {r.findings.map((f, i) => (
          <li key={`${f.check}-${i}`} data-testid="reports-finding" data-ok={f.ok ? 'true' : 'false'}>
            <span className={`reports-findings__word reports-findings__word--${f.ok ? 'ok' : 'fail'}`}>{f.ok ? 'ok' : 'FAIL'}</span>{' '}
            <span>
              <strong>{f.check}</strong> <span className="muted">{f.detail}</span>
            </span>
          </li>
        ))}
      </ul>
    </div>
  );
}
