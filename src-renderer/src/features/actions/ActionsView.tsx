// The Actions view: per-service buttons that open a DRAFT of a wake / sleep /
// offload / restart (nothing recorded until Propose or Approve in the dialog),
// the inbox of pending proposals (approve, reject or withdraw in a dialog),
// live progress, actions the console stopped in the middle of (interrupted:
// what was done, Verify now), history with outcomes, standing approvals, and
// the audit chain check. Nothing here changes a server without the dialog's approval.
import { useMemo, useState } from 'react';
import { decisionFacts, decisionSentence, type ActionDraft, type ActionKind, type ActionView, type AuditVerifyResult } from '../../../../src-preload/contract/index.js';
import { useAppStore, useServices } from '../../app/app-context.js';
import { toContractError } from '../../transport/transport.js';
import { sleepView } from '../fleet/service-facts.js';
import { ConfirmDialog } from './ConfirmDialog.js';
import { InterruptedAction } from './InterruptedAction.js';
import { StandingForm } from './StandingForm.js';
import { standingStatus } from './standing-form.js';
import { seconds, useActions } from './use-actions.js';
import './actions.css';
import { formatTime } from '../../format/format.js';

const KINDS: readonly ActionKind[] = ['wake', 'sleep', 'offload', 'restart'];
const LIVE = new Set(['approved', 'running']);

export function ActionsView(): React.JSX.Element {
  const { transport } = useServices();
  const { actions, standing, targets, error } = useActions();
  const setView = useAppStore((s) => s.setView);
  const sleepOf = useAppStore((s) => s.fleet.snapshot);
  const [open, setOpen] = useState<string | null>(null);
  const [draft, setDraft] = useState<ActionDraft | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [audit, setAudit] = useState<AuditVerifyResult | null>(null);
  const [checking, setChecking] = useState<ReadonlySet<string>>(new Set());
  const [checkProblems, setCheckProblems] = useState<Readonly<Record<string, string>>>({});
  const pending = actions.filter((a) => a.state === 'proposed');
  const unchecked = actions.filter((a) => a.state === 'interrupted' && a.interruption && !a.interruption.check);
  const live = actions.filter((a) => LIVE.has(a.state));
  const history = actions.filter((a) => !LIVE.has(a.state) && a.state !== 'proposed');
  const current = useMemo(() => actions.find((a) => a.id === open) ?? null, [actions, open]);

  /** A Propose button: the dialog shows the draft; a proposal of the same kind already waiting opens instead. */
  const propose = (upstream: string, kind: ActionKind): void => {
    setProblem(null);
    transport.invoke('actions.preview', { upstream, kind }).then(
      ({ draft: d }) => {
        if (d.existing?.state === 'proposed') setOpen(d.existing.id);
        else if (d.existing) setProblem(`${kind} of ${upstream} is already ${d.existing.state}; one at a time`);
        else setDraft(d);
      },
      (err: unknown) => {
        const e = toContractError(err);
        setProblem(`${e.code}: ${e.message}`);
      },
    );
  };
  const revoke = (id: string): void => {
    transport.invoke('actions.revokeStanding', { id }).catch((err: unknown) => {
      const e = toContractError(err);
      setProblem(`${e.code}: ${e.message}`);
    });
  };
  /** Verify now: the answer also arrives as action.changed, which updates the list. */
  const verifyNow = (id: string): void => {
    setChecking((s) => new Set([...s, id]));
    setCheckProblems(({ [id]: _gone, ...rest }) => rest);
    const done = () => setChecking((s) => new Set([...s].filter((x) => x !== id)));
    transport.invoke('actions.verifyNow', { id }).then(done, (err: unknown) => {
      const e = toContractError(err);
      setCheckProblems((p) => ({ ...p, [id]: `${e.code}: ${e.message}` }));
      done();
    });
  };
  const interrupted = (a: ActionView, compact = false) => (
    <InterruptedAction action={a} checking={checking.has(a.id)} problem={checkProblems[a.id] ?? null} onVerify={verifyNow} compact={compact} />
  );
  const verify = (): void => {
    transport.invoke('audit.verify', {}).then(setAudit, (err: unknown) => setProblem(toContractError(err).message));
  };
  const serviceOf = (upstream: string) => {
    const [label, id] = upstream.split('/');
    return sleepOf?.hosts.find((h) => h.label === label)?.services.find((s) => s.id === id);
  };
  const stateOf = (upstream: string): string => {
    const svc = serviceOf(upstream);
    if (!svc) return 'unknown';
    const sleep = sleepView(svc);
    return `${svc.sleep}${sleep.note ? ` (${sleep.note})` : ''} · health ${svc.health}`;
  };
  /** Why a kind cannot be proposed for this target, or null. */
  const refusal = (t: { upstream: string; driver: string; supported: readonly ActionKind[]; unavailable?: readonly { kind: ActionKind; reason: string }[] }, k: ActionKind): string | null => {
    if (t.supported.includes(k)) {
      const svc = serviceOf(t.upstream);
      if ((k === 'sleep' || k === 'wake') && svc && !sleepView(svc).offersSleepWake) return `${svc.kind} sleeps and wakes by itself; nothing to propose`;
      // vLLM's sleep endpoints: only the transitions the service's current state allows (a router's model has its own state).
      if (svc && t.driver === 'vllm-sleep') {
        if (k === 'wake' && svc.sleep === 'awake') return 'the service is awake; nothing to wake';
        if (k === 'sleep' && (svc.sleep === 'asleep-1' || svc.sleep === 'asleep-2')) return `the service is already asleep (${svc.sleep.replace('asleep-', 'level ')})`;
        if (k === 'offload' && svc.sleep === 'asleep-2') return 'the service is already offloaded (asleep, level 2)';
      }
      return null;
    }
    // The driver's own reason when main gives one ("add lifecycle.systemdUnit to restart it").
    return t.unavailable?.find((u) => u.kind === k)?.reason ?? `the ${t.driver} driver cannot ${k}`;
  };

  return (
    <section className="actions" aria-labelledby="actions-title" data-testid="actions-view">
      <div className="view-title">
        <h1 id="actions-title">Actions</h1>
        <p className="muted">Wake, sleep, offload and restart are proposed here and run only after an approval; every step is in the audit log.</p>
      </div>
      {error || problem ? (
        <p className="inline-error" role="alert" data-testid="actions-error">
          {problem ?? error}
        </p>
      ) : null}

      <section className="panel" aria-labelledby="inbox-title">
        <h3 className="panel__title" id="inbox-title">
          Waiting for approval <span className="badge" data-testid="inbox-count">{pending.length}</span>
        </h3>
        {pending.length === 0 ? <p className="muted panel__empty">No pending proposals.</p> : null}
        <ul className="actions-inbox">
          {pending.map((a) => (
            <li key={a.id} className="actions-inbox__item" data-testid="proposal" data-action-id={a.id} data-kind={a.kind} data-upstream={a.upstream}>
              <div>
                <strong>{a.kind}</strong> <code>{a.upstream}</code> — {a.reason}
                {a.repeats > 0 ? <span className="muted"> (asked {a.repeats + 1}×)</span> : null}
                <div className="muted">
                  by {a.proposer} · ~{seconds(a.expectedDowntimeMs)} downtime ({a.downtimeBasis}) · expires {formatTime(a.expiresAt)}
                </div>
              </div>
              <button type="button" className="button" onClick={() => setOpen(a.id)} data-testid={`review-${a.id}`}>
                Review…
              </button>
            </li>
          ))}
        </ul>
      </section>

      {live.length > 0 ? (
        <section className="panel" aria-labelledby="live-title" aria-live="polite">
          <h3 className="panel__title" id="live-title">Running</h3>
          <ul className="actions-inbox">
            {live.map((a) => (
              <li key={a.id} className="actions-inbox__item" data-testid="running-action" data-action-id={a.id}>
                <strong>{a.kind}</strong> <code>{a.upstream}</code> — {a.state}: {a.progress ?? '…'}
              </li>
            ))}
          </ul>
        </section>
      ) : null}

      {unchecked.length > 0 ? (
        <section className="panel" aria-labelledby="interrupted-title" data-testid="interrupted-panel">
          <h3 className="panel__title" id="interrupted-title">
            Interrupted: check the service and decide <span className="badge">{unchecked.length}</span>
          </h3>
          <p className="muted panel__empty">The console stopped while these ran. Nothing was resumed; no standing approval runs on these services until someone has checked.</p>
          <ul className="actions-inbox actions-interrupted-list">
            {unchecked.map((a) => (
              <li key={a.id} data-testid="interrupted-action" data-action-id={a.id}>
                <strong>{a.kind}</strong> <code>{a.upstream}</code> — {decisionSentence(decisionFacts(a))}
                {interrupted(a)}
              </li>
            ))}
          </ul>
        </section>
      ) : null}

      <section className="panel" aria-labelledby="services-title">
        <h3 className="panel__title" id="services-title">Services</h3>
        <table className="data-table">
          <thead>
            <tr>
              <th scope="col">Service</th>
              <th scope="col">Model</th>
              <th scope="col">Driver</th>
              <th scope="col">State</th>
              <th scope="col">Propose</th>
            </tr>
          </thead>
          <tbody>
            {targets.map((t) => (
              <tr key={t.upstream} data-testid={`target-${t.upstream}`}>
                <td>
                  <code>{t.upstream}</code>
                </td>
                <td>{t.model}</td>
                <td>{t.driver}</td>
                <td>{stateOf(t.upstream)}</td>
                <td className="actions-buttons">
                  {KINDS.map((k) => {
                    const why = refusal(t, k);
                    return (
                      <button
                        key={k}
                        type="button"
                        className="button button--small"
                        disabled={why !== null}
                        title={why ?? `${k[0]!.toUpperCase() + k.slice(1)}: shows what it will do; nothing is recorded until you propose or approve`}
                        onClick={() => propose(t.upstream, k)}
                        data-testid={`propose-${k}-${t.upstream}`}
                      >
                        {k[0]!.toUpperCase() + k.slice(1)}…
                      </button>
                    );
                  })}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>

      <section className="panel" aria-labelledby="history-title">
        <h3 className="panel__title" id="history-title">History</h3>
        {history.length === 0 ? <p className="muted panel__empty">No finished actions yet.</p> : null}
        <table className="data-table">
          <tbody>
            {history.map((a) => (
              <HistoryRow key={a.id} a={a} details={a.state === 'interrupted' && a.interruption?.check ? interrupted(a, true) : null} />
            ))}
          </tbody>
        </table>
      </section>

      <section className="panel" aria-labelledby="standing-title">
        <h3 className="panel__title" id="standing-title">Standing approvals</h3>
        {standing.length === 0 ? <p className="muted panel__empty">None. A standing approval lets one kind of action run for one service without asking, for a limited time.</p> : null}
        <ul className="actions-standing-list">
          {standing.map((s) => {
            const status = standingStatus(s, Date.now());
            return (
              <li key={s.id} data-testid="standing" data-standing-id={s.id} data-status={s.revokedAt !== null ? 'revoked' : status === 'expired' ? 'expired' : 'active'}>
                <span>
                  <strong>{s.kind}</strong> <code>{s.upstream}</code> · by {s.grantedBy} · until {formatTime(s.expiresAt)} ({status}) · used {s.uses}×
                </span>
                {s.revokedAt === null && status !== 'expired' ? (
                  <button type="button" className="button button--small" onClick={() => revoke(s.id)} data-testid={`standing-revoke-${s.id}`} aria-label={`Revoke standing ${s.kind} of ${s.upstream}`}>
                    Revoke
                  </button>
                ) : null}
              </li>
            );
          })}
        </ul>
        <StandingForm targets={targets} />
      </section>

      <section className="panel" aria-labelledby="chain-title">
        <h3 className="panel__title" id="chain-title">Audit chain</h3>
        <button type="button" className="button" onClick={verify} data-testid="actions-verify-chain">
          Verify the audit chain
        </button>{' '}
        <button type="button" className="button button--ghost" onClick={() => setView('audit')}>
          Open the audit log
        </button>
        {audit ? (
          <p data-testid="actions-chain-result" className={audit.ok ? '' : 'inline-error'}>
            {audit.ok
              ? `Chain OK: ${audit.count} events${audit.head ? `, head #${audit.head.seq}` : ''}.`
              : `Chain BROKEN at event #${audit.brokenAt} (${audit.reason}); ${audit.count} events verified before it.`}
          </p>
        ) : null}
      </section>

      {draft ? <ConfirmDialog subject={{ draft }} onClose={() => setDraft(null)} /> : null}
      {!draft && current && current.state === 'proposed' ? <ConfirmDialog subject={{ action: current }} onClose={() => setOpen(null)} /> : null}
    </section>
  );
}

function HistoryRow({ a, details }: { a: ActionView; details: React.JSX.Element | null }): React.JSX.Element {
  return (
    <tr data-testid="history-row" data-action-id={a.id} data-state={a.state}>
      <td>{formatTime(a.finishedAt ?? a.createdAt)}</td>
      <td>
        <strong>{a.kind}</strong> <code>{a.upstream}</code>
      </td>
      <td>
        <span className={`badge actions-state--${a.state}`}>{a.state}</span>
      </td>
      <td data-testid="history-decision" data-decision={a.decision ?? 'none'}>
        {decisionSentence(decisionFacts(a))}
        <div className="muted">proposed by {a.proposer}</div>
      </td>
      <td>
        {a.error ?? a.observed.join(' · ')}
        {a.drained !== null ? <span className="muted"> · drained {a.drained}, cut {a.aborted}</span> : null}
        {a.directAtDrain ? (
          <span className="muted" data-testid="history-direct">
            {' '}
            · {a.directAtDrain.text}
          </span>
        ) : null}
        {details}
      </td>
    </tr>
  );
}
