// The approval dialog: what exactly will happen (each call or command
// verbatim), the expected downtime and its basis, what is in flight (through
// the proxy and from clients on the SSH tunnel directly, as the engine counts
// them), and for restart / offload the host label typed. The safe button has
// the focus; the approve button stays disabled until what is required is there.
import { useEffect, useRef, useState } from 'react';
import type { ActionView } from '../../../../src-preload/contract/index.js';
import { useServices } from '../../app/app-context.js';
import { toContractError } from '../../transport/transport.js';
import { seconds } from './use-actions.js';

/** The approver's name as last typed on this machine (not a secret; shown in the audit log and evidence reports). */
const APPROVER_KEY = 'gpu-console.approverName';

function savedApproverName(): string {
  try {
    return localStorage.getItem(APPROVER_KEY) ?? '';
  } catch {
    return '';
  }
}

export function ConfirmDialog({ action, onClose }: { action: ActionView; onClose: () => void }): React.JSX.Element {
  const { transport } = useServices();
  const [typed, setTyped] = useState('');
  const [approverName, setApproverName] = useState(savedApproverName);
  const [mode, setMode] = useState<'approve' | 'reject'>('approve');
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const cancelRef = useRef<HTMLButtonElement>(null);
  useEffect(() => cancelRef.current?.focus(), []);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') onClose();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [onClose]);

  const ready = mode === 'approve' ? !action.requiresTypedLabel || typed === action.label : reason.trim().length > 0;
  const submit = (): void => {
    if (!ready || !action.nonce) return;
    setBusy(true);
    setError(null);
    const name = approverName.trim().slice(0, 80);
    if (mode === 'approve') {
      try {
        localStorage.setItem(APPROVER_KEY, name);
      } catch {
        // storage unavailable: the name is still sent with this approval
      }
    }
    const call =
      mode === 'approve'
        ? transport.invoke('actions.approve', {
            id: action.id,
            nonce: action.nonce,
            ...(action.requiresTypedLabel ? { typedLabel: typed } : {}),
            ...(name ? { displayName: name } : {}),
          })
        : transport.invoke('actions.reject', { id: action.id, nonce: action.nonce, reason: reason.trim() });
    call.then(
      () => onClose(),
      (err: unknown) => {
        const e = toContractError(err);
        setBusy(false);
        setError(`${e.code}: ${e.message}`);
      },
    );
  };
  const destructive = action.requiresTypedLabel;

  return (
    <div className="dialog-backdrop" role="presentation">
      <div className="dialog actions-dialog" role="dialog" aria-modal="true" aria-labelledby="action-title" data-testid="action-dialog">
        <h2 id="action-title">
          {action.kind[0]!.toUpperCase() + action.kind.slice(1)} <code>{action.upstream}</code>?
        </h2>
        <p>{action.expectedEffect}.</p>
        <dl className="actions-facts">
          <dt>Proposed by</dt>
          <dd>
            {action.proposer} — {action.reason}
          </dd>
          <dt>Expected downtime</dt>
          <dd data-testid="action-downtime">
            ~{seconds(action.expectedDowntimeMs)} <span className="muted">({action.downtimeBasis})</span>
          </dd>
          <dt>Right now</dt>
          <LoadFacts action={action} />
        </dl>
        <h3 className="actions-dialog__sub">Exactly what will be done</h3>
        <ol className="actions-steps" data-testid="action-steps">
          {action.steps.map((s, i) => (
            <li key={i} className={`actions-step actions-step--${s.kind}`}>
              <span className="badge">{s.kind}</span> <code data-testid={`action-step-${s.kind}`}>{withoutLeadingWord(s.text, s.kind)}</code>
              {s.body ? (
                <div>
                  body <code>{s.body}</code>
                </div>
              ) : null}
            </li>
          ))}
        </ol>
        <div className="actions-mode" role="radiogroup" aria-label="Decision">
          <label>
            <input type="radio" name="decision" checked={mode === 'approve'} onChange={() => setMode('approve')} data-testid="decision-approve" /> Approve
          </label>
          <label>
            <input type="radio" name="decision" checked={mode === 'reject'} onChange={() => setMode('reject')} data-testid="decision-reject" /> Reject
          </label>
        </div>
        {mode === 'approve' && destructive ? (
          <label className="actions-typed">
            <span>
              Type the host label <strong>{action.label}</strong> to confirm this {action.kind}:
            </span>
            <input value={typed} onChange={(e) => setTyped(e.target.value)} autoComplete="off" spellCheck={false} data-testid="action-typed-label" aria-label={`Type ${action.label} to confirm`} />
          </label>
        ) : null}
        {mode === 'approve' ? (
          <label className="actions-typed">
            <span>
              Your name <span className="muted">(recorded as the approver in the audit log and evidence reports; default: your OS user)</span>
            </span>
            <input value={approverName} maxLength={80} onChange={(e) => setApproverName(e.target.value)} autoComplete="name" data-testid="action-approver-name" />
          </label>
        ) : null}
        {mode === 'reject' ? (
          <label className="actions-typed">
            Reason for rejecting:
            <input value={reason} onChange={(e) => setReason(e.target.value)} data-testid="action-reject-reason" />
          </label>
        ) : null}
        {error ? (
          <p className="inline-error" role="alert" data-testid="action-error">
            {error}
          </p>
        ) : null}
        <div className="dialog__actions">
          <button type="button" className="button" onClick={onClose} ref={cancelRef} disabled={busy} data-testid="action-cancel">
            Cancel
          </button>
          <button
            type="button"
            className={`button ${mode === 'approve' && destructive ? 'button--danger' : 'button--primary'}`}
            disabled={!ready || busy || action.nonce === null}
            onClick={submit}
            data-testid="action-submit"
          >
            {mode === 'approve' ? `Approve ${action.kind}` : 'Reject'}
          </button>
        </div>
      </div>
    </div>
  );
}

/** What is running now: the proxy's count and the engine's (direct tunnel clients), or the proxy's alone on older records. */
function LoadFacts({ action }: { action: ActionView }): React.JSX.Element {
  const load = action.load;
  if (!load) {
    return (
      <dd data-testid="action-load">
        {action.inFlight} requests in flight, {action.queued} queued on {action.upstream} <span className="muted">(through the proxy only)</span>
      </dd>
    );
  }
  return (
    <dd data-testid="action-load" data-engine={load.engine} data-direct={load.direct ?? 'unknown'}>
      <span data-testid="action-load-summary">{load.summary}</span>
      {load.engine !== 'fresh' ? (
        <div className="text-warn" data-testid="action-load-engine">
          The engine&apos;s figure is {load.engine}: requests from direct tunnel clients are unknown (not 0).
        </div>
      ) : null}
      {load.direct !== null && load.direct > 0 && action.kind !== 'wake' ? (
        <div className="muted" data-testid="action-load-direct">
          The proxy cannot hold direct tunnel clients back: the drain waits, within its deadline, for the engine to report none running; what still runs after that is cut.
        </div>
      ) : null}
    </dd>
  );
}

/** A step's text often opens with its kind ("drain l20-poc/qwen …", "verify (…)"), which the badge already says. */
function withoutLeadingWord(text: string, word: string): string {
  return text.startsWith(`${word} `) ? text.slice(word.length + 1) : text;
}
