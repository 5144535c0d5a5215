// Grant a standing approval: service, action kind, duration in hours, and for
// restart / offload the host label typed. "Review…" opens an inline
// confirmation whose safe button (Cancel) has the focus; only its explicit
// "Grant" button calls actions.grantStanding. Escape backs out.
import { useEffect, useRef, useState } from 'react';
import type { ActionKind, LifecycleTarget } from '../../../../src-preload/contract/index.js';
import { useServices } from '../../app/app-context.js';
import { toContractError } from '../../transport/transport.js';
import { checkStanding, DESTRUCTIVE_KINDS, EMPTY_STANDING, STANDING_MAX_HOURS, type StandingDraft } from './standing-form.js';
import { formatTime } from '../../format/format.js';

const KINDS: readonly ActionKind[] = ['wake', 'sleep', 'offload', 'restart'];

export function StandingForm({ targets }: { targets: readonly LifecycleTarget[] }): React.JSX.Element {
  const { transport } = useServices();
  const [draft, setDraft] = useState<StandingDraft>(EMPTY_STANDING);
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [problems, setProblems] = useState<string[]>([]);
  const [done, setDone] = useState<string | null>(null);
  const cancelRef = useRef<HTMLButtonElement>(null);
  const target = targets.find((t) => t.upstream === draft.upstream) ?? null;
  const destructive = draft.kind !== '' && DESTRUCTIVE_KINDS.has(draft.kind);
  const check = checkStanding(draft, targets, Date.now());

  useEffect(() => {
    if (confirming) cancelRef.current?.focus();
  }, [confirming]);

  const set = <K extends keyof StandingDraft>(k: K, v: StandingDraft[K]): void => {
    setDraft((d) => ({ ...d, [k]: v, ...(k === 'upstream' || k === 'kind' ? { typedLabel: '' } : {}) }));
    setConfirming(false);
    setDone(null);
  };
  const review = (e: React.FormEvent): void => {
    e.preventDefault();
    setDone(null);
    if (!check.ok) {
      setProblems(check.problems);
      return;
    }
    setProblems([]);
    setConfirming(true);
  };
  const grant = (): void => {
    if (!check.ok || busy) return;
    setBusy(true);
    transport.invoke('actions.grantStanding', check.input).then(
      (r) => {
        setBusy(false);
        setConfirming(false);
        setDraft(EMPTY_STANDING);
        setDone(`Granted: ${r.standing.kind} of ${r.standing.upstream} until ${formatTime(r.standing.expiresAt)}.`);
      },
      (err: unknown) => {
        const e = toContractError(err);
        setBusy(false);
        setConfirming(false);
        setProblems([`${e.code}: ${e.message}`]);
      },
    );
  };

  return (
    <form className="actions-standing-form" noValidate onSubmit={review} aria-labelledby="standing-form-title" data-testid="standing-form">
      <h4 id="standing-form-title" className="actions-dialog__sub">Grant a standing approval</h4>
      <div className="actions-standing-fields">
        <label>
          Service
          <select value={draft.upstream} onChange={(e) => set('upstream', e.target.value)} data-testid="standing-service" required>
            <option value="">Choose…</option>
            {targets.map((t) => (
              <option key={t.upstream} value={t.upstream}>
                {t.upstream}
              </option>
            ))}
          </select>
        </label>
        <label>
          Action
          <select value={draft.kind} onChange={(e) => set('kind', e.target.value as ActionKind | '')} data-testid="standing-kind" required>
            <option value="">Choose…</option>
            {KINDS.map((k) => (
              <option key={k} value={k} disabled={target !== null && !target.supported.includes(k)}>
                {k}
                {DESTRUCTIVE_KINDS.has(k) ? ' (destructive)' : ''}
              </option>
            ))}
          </select>
        </label>
        <label>
          Duration (hours)
          <input
            type="number"
            min={1}
            max={STANDING_MAX_HOURS}
            step={1}
            inputMode="numeric"
            value={draft.hours}
            onChange={(e) => set('hours', e.target.value)}
            data-testid="standing-hours"
            required
          />
        </label>
        {destructive && target ? (
          <label>
            Type the host label <code>{target.label}</code>
            <input
              type="text"
              autoComplete="off"
              spellCheck={false}
              value={draft.typedLabel}
              onChange={(e) => set('typedLabel', e.target.value)}
              data-testid="standing-typed-label"
              aria-describedby="standing-typed-hint"
            />
            <span id="standing-typed-hint" className="muted">
              {draft.kind} is destructive: it cuts requests still running after the drain.
            </span>
          </label>
        ) : null}
        <button type="submit" className="button" disabled={busy} data-testid="standing-review">
          Review…
        </button>
      </div>
      {problems.length > 0 ? (
        <ul className="inline-error" role="alert" data-testid="standing-problems">
          {problems.map((p) => (
            <li key={p}>{p}</li>
          ))}
        </ul>
      ) : null}
      {done ? (
        <p role="status" data-testid="standing-done">
          {done}
        </p>
      ) : null}
      {confirming && check.ok ? (
        <div
          className="actions-standing-confirm"
          role="alertdialog"
          aria-labelledby="standing-confirm-title"
          aria-describedby="standing-confirm-text"
          data-testid="standing-confirm"
          onKeyDown={(e) => {
            if (e.key === 'Escape') setConfirming(false);
          }}
        >
          <strong id="standing-confirm-title">Pre-approve {check.input.kind}?</strong>
          <p id="standing-confirm-text">{check.summary}</p>
          <button ref={cancelRef} type="button" className="button button--ghost" onClick={() => setConfirming(false)} data-testid="standing-cancel">
            Cancel
          </button>{' '}
          <button
            type="button"
            className={`button ${DESTRUCTIVE_KINDS.has(check.input.kind) ? 'button--danger' : 'button--primary'}`}
            onClick={grant}
            disabled={busy}
            data-testid="standing-grant"
          >
            Grant for {check.input.durationMinutes / 60} h
          </button>
        </div>
      ) : null}
    </form>
  );
}
