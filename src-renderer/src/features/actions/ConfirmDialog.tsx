// The approval dialog: what exactly will happen (each call or command
// verbatim), the expected downtime and its basis, what is in flight (through
// the proxy and from clients on the SSH tunnel directly, as the engine counts
// them), and for restart / offload the host label typed. The safe button has
// the focus; the approve button stays disabled until what is required is there.
//
// Opened from a Propose button it shows a DRAFT: nothing exists or is audited
// until the operator presses Propose (leave it for an approver) or Approve
// (proposed and approved at once); Cancel and Escape leave no trace. Opened on
// a waiting proposal it decides it: approve, reject with a reason, or withdraw;
// Close keeps it waiting.
import { useState } from 'react';
import type { ActionDraft, ActionView } from '../../../../src-preload/contract/index.js';
import { useServices } from '../../app/app-context.js';
import { toContractError } from '../../transport/transport.js';
import { seconds } from './use-actions.js';
import { useDialogDismiss } from '../../app/use-dialog.js';

/** The approver's name as last typed on this machine (not a secret; shown in the audit log and evidence reports). */
const APPROVER_KEY = 'gpu-console.approverName';

function savedApproverName(): string {
  try {
    return localStorage.getItem(APPROVER_KEY) ?? '';
  } catch {
    return '';
  }
}

function saveApproverName(name: string): void {
  try {
    localStorage.setItem(APPROVER_KEY, name);
  } catch {
    // storage unavailable: the name is still sent with this approval
  }
}

/** A draft to propose, or a proposal that exists and waits for a decision. */
export type DialogSubject = { draft: ActionDraft } | { action: ActionView };

type Mode = 'approve' | 'reject' | 'withdraw' | 'propose';

export function ConfirmDialog({ subject, onClose }: { subject: DialogSubject; onClose: () => void }): React.JSX.Element {
  const { transport } = useServices();
  const isDraft = 'draft' in subject;
  const facts: ActionDraft | ActionView = isDraft ? subject.draft : subject.action;
  const [typed, setTyped] = useState('');
  const [approverName, setApproverName] = useState(savedApproverName);
  const [mode, setMode] = useState<Mode>('approve');
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const cancelRef = useDialogDismiss(onClose);

  const nonce = isDraft ? null : subject.action.nonce;
  const labelOk = !facts.requiresTypedLabel || typed === facts.label;
  const ready =
    mode === 'approve' ? labelOk && (isDraft || nonce !== null) : mode === 'reject' ? reason.trim().length > 0 && nonce !== null : mode === 'withdraw' ? nonce !== null : true;
  const submit = (): void => {
    if (!ready) return;
    setBusy(true);
    setError(null);
    const name = approverName.trim().slice(0, 80);
    if (mode === 'approve') saveApproverName(name);
    const approval = { ...(facts.requiresTypedLabel ? { typedLabel: typed } : {}), ...(name ? { displayName: name } : {}) };
    const why = reason.trim();
    let call: Promise<unknown>;
    if (isDraft) {
      const base = { upstream: facts.upstream, kind: facts.kind, reason: why || `operator pressed ${facts.kind} in the Actions view` };
      call = transport.invoke('actions.propose', mode === 'approve' ? { ...base, approveNow: approval } : base);
    } else {
      const { id } = subject.action;
      if (mode === 'approve') call = transport.invoke('actions.approve', { id, nonce: nonce!, ...approval });
      else if (mode === 'reject') call = transport.invoke('actions.reject', { id, nonce: nonce!, reason: why });
      else call = transport.invoke('actions.withdraw', { id, nonce: nonce!, ...(why ? { reason: why } : {}) });
    }
    call.then(
      () => onClose(),
      (err: unknown) => {
        const e = toContractError(err);
        setBusy(false);
        setError(`${e.code}: ${e.message}`);
      },
    );
  };
  const destructive = facts.requiresTypedLabel;
  const modes: { mode: Mode; label: string }[] = isDraft
    ? [
        { mode: 'approve', label: 'Approve and run now' },
        { mode: 'propose', label: 'Propose only (another person approves)' },
      ]
    : [
        { mode: 'approve', label: 'Approve' },
        { mode: 'reject', label: 'Reject' },
        { mode: 'withdraw', label: 'Withdraw the proposal' },
      ];
  const submitLabel = { approve: `Approve ${facts.kind}`, propose: `Propose ${facts.kind}`, reject: 'Reject', withdraw: 'Withdraw' }[mode];

  return (
    <div className="dialog-backdrop" role="presentation">
      <div className="dialog actions-dialog" role="dialog" aria-modal="true" aria-labelledby="action-title" data-testid="action-dialog" data-draft={isDraft ? 'true' : 'false'}>
        <h2 id="action-title">
          {facts.kind[0]!.toUpperCase() + facts.kind.slice(1)} <code>{facts.upstream}</code>?
        </h2>
        <p>{facts.expectedEffect}.</p>
        <dl className="actions-facts">
          <dt>{isDraft ? 'Status' : 'Proposed by'}</dt>
          <dd data-testid="action-status">
            {isDraft ? 'Draft — nothing is recorded until you propose or approve it.' : `${subject.action.proposer} — ${subject.action.reason}`}
          </dd>
          {isDraft && subject.draft.standing ? (
            <>
              <dt>Standing approval</dt>
              <dd className="text-warn">Standing approval {subject.draft.standing} covers this: proposing it runs it at once.</dd>
            </>
          ) : null}
          <dt>Expected downtime</dt>
          <dd data-testid="action-downtime">
            ~{seconds(facts.expectedDowntimeMs)} <span className="muted">({facts.downtimeBasis})</span>
          </dd>
          <dt>Right now</dt>
          <LoadFacts facts={facts} />
        </dl>
        <h3 className="actions-dialog__sub">Exactly what will be done</h3>
        <ol className="actions-steps" data-testid="action-steps">
          {facts.steps.map((s, i) => (
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
          {modes.map((m) => (
            <label key={m.mode}>
              <input type="radio" name="decision" checked={mode === m.mode} onChange={() => setMode(m.mode)} data-testid={`decision-${m.mode}`} /> {m.label}
            </label>
          ))}
        </div>
        {mode === 'approve' && destructive ? (
          <label className="actions-typed">
            <span>
              Type the host label <strong>{facts.label}</strong> to confirm this {facts.kind}:
            </span>
            <input value={typed} onChange={(e) => setTyped(e.target.value)} autoComplete="off" spellCheck={false} data-testid="action-typed-label" aria-label={`Type ${facts.label} to confirm`} />
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
        {mode !== 'approve' ? (
          <label className="actions-typed">
            <span>{mode === 'reject' ? 'Reason for rejecting:' : mode === 'withdraw' ? 'Reason (optional):' : 'Reason (optional, shown to the approver):'}</span>
            <input value={reason} maxLength={500} onChange={(e) => setReason(e.target.value)} data-testid="action-reason" />
          </label>
        ) : null}
        {error ? (
          <p className="inline-error" role="alert" data-testid="action-error">
            {error}
          </p>
        ) : null}
        <div className="dialog__actions">
          <button
            type="button"
            className="button"
            onClick={onClose}
            ref={cancelRef}
            disabled={busy}
            data-testid="action-cancel"
            title={isDraft ? 'Close; nothing is recorded' : 'Close; the proposal keeps waiting'}
          >
            {isDraft ? 'Cancel' : 'Close'}
          </button>
          <button
            type="button"
            className={`button ${mode === 'approve' && destructive ? 'button--danger' : 'button--primary'}`}
            disabled={!ready || busy}
            onClick={submit}
            data-testid="action-submit"
          >
            {submitLabel}
          </button>
        </div>
      </div>
    </div>
  );
}

/** What is running now: the proxy's count and the engine's (direct tunnel clients), or the proxy's alone on older records. */
function LoadFacts({ facts }: { facts: ActionDraft | ActionView }): React.JSX.Element {
  const load = facts.load;
  if (!load) {
    return (
      <dd data-testid="action-load">
        {facts.inFlight} requests in flight, {facts.queued} queued on {facts.upstream} <span className="muted">(through the proxy only)</span>
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
      {load.direct !== null && load.direct > 0 && facts.kind !== 'wake' ? (
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
