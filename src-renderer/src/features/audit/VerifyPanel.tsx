import { useState } from 'react';
import type { AuditVerifyResult, ContractError } from '../../../../src-preload/contract/index.js';
import { useServices } from '../../app/app-context.js';
import { Badge } from '../../components/Badge.js';
import { shortHash } from '../../format/format.js';
import { toContractError } from '../../transport/transport.js';

export interface VerifyPanelProps {
  readonly onBrokenAt: (seq: number | null) => void;
}

type VerifyState = { status: 'idle' } | { status: 'running' } | { status: 'done'; result: AuditVerifyResult } | { status: 'error'; error: ContractError };

export function VerifyPanel({ onBrokenAt }: VerifyPanelProps): React.JSX.Element {
  const { transport } = useServices();
  const [state, setState] = useState<VerifyState>({ status: 'idle' });

  const verify = (): void => {
    setState({ status: 'running' });
    transport.invoke('audit.verify', {}).then(
      (result) => {
        setState({ status: 'done', result });
        onBrokenAt(result.ok ? null : result.brokenAt);
      },
      (error: unknown) => setState({ status: 'error', error: toContractError(error) }),
    );
  };

  return (
    <div className="verify-panel" data-testid="audit-verify">
      <button type="button" className="button button--primary" onClick={verify} disabled={state.status === 'running'} data-testid="audit-verify-button">
        {state.status === 'running' ? 'Verifying…' : 'Verify chain'}
      </button>
      <div className="verify-panel__result" aria-live="polite">
        {state.status === 'done' && state.result.ok ? (
          <>
            <Badge tone="ok" testId="audit-verify-ok">
              chain intact
            </Badge>
            <span className="num">{state.result.count} events</span>
            {state.result.head ? (
              <span>
                head #{state.result.head.seq} <code title={state.result.head.hash}>{shortHash(state.result.head.hash, 16)}</code>
              </span>
            ) : (
              <span className="muted">empty log</span>
            )}
          </>
        ) : null}
        {state.status === 'done' && !state.result.ok ? (
          <>
            <Badge tone="error" testId="audit-verify-broken">
              broken at #{state.result.brokenAt}
            </Badge>
            <span>{state.result.reason}</span>
            {state.result.expected ? (
              <span>
                expected <code>{shortHash(state.result.expected, 16)}</code>
              </span>
            ) : null}
            {state.result.actual ? (
              <span>
                found <code>{shortHash(state.result.actual, 16)}</code>
              </span>
            ) : null}
            {state.result.lastGood ? <span className="muted">last good #{state.result.lastGood.seq}</span> : null}
          </>
        ) : null}
        {state.status === 'error' ? (
          <span className="inline-error" role="alert">
            audit.verify failed — {state.error.code}: {state.error.message}
          </span>
        ) : null}
      </div>
    </div>
  );
}
