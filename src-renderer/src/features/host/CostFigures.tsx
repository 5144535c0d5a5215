// A host's cost estimates over the chosen window, by the same function as evidence
// reports (observed time only, coverage stated). Every figure says "estimate";
// unavailable ones say why; an unknown token count or spend is never shown as 0.
// With the app's transport at hand it also shows the host's monthly budget
// (spent this month, % used) with an inline form to set or clear the override.
import { useCallback, useContext, useEffect, useState } from 'react';
import type { BudgetLine, BudgetStatus } from '../../../../src-preload/contract/budget.js';
import type { Estimate, HostCost } from '../../../../src-preload/contract/telemetry.js';
import { AppContext } from '../../app/app-context.js';
import { formatEstimate, formatObserved, formatTokens, formatUsd, parseBudgetInput } from './cost-format.js';

function Figure({ label, e, testId }: { label: string; e: Estimate; testId: string }): React.JSX.Element {
  return (
    <div className="host-cost__fig" data-testid={testId} data-value={e.value ?? ''} title={e.value === null ? (e.unavailableReason ?? '') : e.basis}>
      <dt>{label}</dt>
      <dd className="num">{formatEstimate(e)}</dd>
    </div>
  );
}

function BudgetFigures({ host, onChanged }: { readonly host: string; readonly onChanged: () => void }): React.JSX.Element | null {
  const services = useContext(AppContext);
  const [status, setStatus] = useState<BudgetStatus | null>(null);
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState('');
  const [error, setError] = useState<string | null>(null);
  const transport = services?.transport ?? null;
  useEffect(() => {
    if (transport === null) return;
    let live = true;
    transport.invoke('budget.get', {}).then(
      (s) => live && setStatus(s),
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [transport, host]);
  const save = useCallback(
    (monthlyUsd: number | null) => {
      if (transport === null) return;
      transport.invoke('budget.set', { host, monthlyUsd }).then(
        (s) => {
          setStatus(s);
          setEditing(false);
          setError(null);
          onChanged();
        },
        (err: unknown) => setError(err instanceof Error ? err.message : String(err)),
      );
    },
    [transport, host, onChanged],
  );
  if (transport === null || status === null) return null;
  const line: BudgetLine | undefined = status.hosts.find((h) => h.host === host);
  if (line === undefined) return null;
  return (
    <div className="host-cost__budget" data-testid="budget-figures" title={status.basis}>
      <dl className="host-cost">
        <div className="host-cost__fig" data-testid="budget-monthly">
          <dt>Monthly budget{line.source === 'override' ? ' (set here)' : line.source === 'config' ? ' (config)' : ''}</dt>
          <dd className="num">{line.monthlyUsd === null ? 'not set' : formatUsd(line.monthlyUsd)}</dd>
        </div>
        <div className="host-cost__fig" data-testid="budget-spent">
          <dt>Spent this month (UTC, est.)</dt>
          <dd className="num">
            {line.spentUsd === null ? 'unknown' : `${formatUsd(line.spentUsd)} est.`} · {line.runningHours.toFixed(1)} h seen running
          </dd>
        </div>
        <div className="host-cost__fig" data-testid="budget-pct">
          <dt>Budget used</dt>
          <dd className="num">{line.pctUsed === null ? '—' : `${line.pctUsed.toFixed(1)} %`}</dd>
        </div>
        <div className="host-cost__fig" data-testid="budget-hours-to-gate" data-value={line.hoursToGate ?? ''}>
          <dt>Hours to budget gate (this month)</dt>
          <dd className="num">{line.hoursToGate === null ? 'unavailable' : `${line.hoursToGate.toFixed(1)} h est.`}</dd>
        </div>
      </dl>
      <p className="muted small">Estimate: price per hour × time this console saw the host connected this calendar month (UTC); time the console was not running is not counted. Alerts at 50 / 80 / 100 %.</p>
      {editing ? (
        <form
          className="host-cost__budget-form"
          aria-label="Edit budget"
          onSubmit={(e) => {
            e.preventDefault();
            const parsed = parseBudgetInput(text);
            if (typeof parsed === 'string') setError(parsed);
            else save(parsed);
          }}
        >
          <label>
            Monthly budget (USD){' '}
            <input data-testid="budget-input" inputMode="decimal" value={text} onChange={(e) => setText(e.target.value)} aria-invalid={error !== null} />
          </label>{' '}
          <button type="submit" className="button button--small button--primary" data-testid="budget-save">
            Save
          </button>{' '}
          <button type="button" className="button button--small" onClick={() => (setEditing(false), setError(null))}>
            Cancel
          </button>
          {error !== null ? (
            <p role="alert" className="error" data-testid="budget-error">
              {error}
            </p>
          ) : null}
        </form>
      ) : (
        <p>
          <button type="button" className="button button--small" data-testid="budget-edit" onClick={() => (setText(line.monthlyUsd === null ? '' : String(line.monthlyUsd)), setEditing(true))}>
            Edit budget
          </button>{' '}
          {line.source === 'override' ? (
            <button type="button" className="button button--small" data-testid="budget-clear" onClick={() => save(null)}>
              Clear override
            </button>
          ) : null}
        </p>
      )}
    </div>
  );
}

export function CostFigures({ cost, onBudgetChanged }: { readonly cost: HostCost | null; readonly onBudgetChanged?: () => void }): React.JSX.Element {
  const [, setBump] = useState(0);
  const changed = useCallback(() => {
    setBump((n) => n + 1);
    onBudgetChanged?.();
  }, [onBudgetChanged]);
  if (cost === null) return <p className="host-cost muted">Cost: unavailable (estimate)</p>;
  return (
    <>
      <dl className="host-cost" aria-label="Cost estimates">
        <Figure label="Run rate" e={cost.perHour} testId="cost-per-hour" />
        <Figure label="Per day" e={cost.perDay} testId="cost-per-day" />
        <Figure label="Per month" e={cost.perMonth} testId="cost-per-month" />
        <div className="host-cost__fig" data-testid="cost-observed" data-value={cost.window.observedSeconds} title="Only the time the console holds readings of this host counts; the rest of the window is neither priced nor divided by.">
          <dt>Observed in the window</dt>
          <dd className="num">{formatObserved(cost.window)}</dd>
        </div>
        <div className="host-cost__fig" data-testid="cost-output-tokens" data-value={cost.window.outputTokens ?? ''} title={cost.window.outputTokensBasis}>
          <dt>Output tokens</dt>
          <dd className="num">{formatTokens(cost.window.outputTokens)}</dd>
        </div>
        <Figure label="Price of the observed time" e={cost.window.observedUsd} testId="cost-observed-usd" />
        <Figure label="Per 1M output tok (busy)" e={cost.perMillionOutputUsageBased} testId="cost-per-mtok-usage" />
        <Figure label="Per 1M output tok (observed time)" e={cost.perMillionOutputReservationBased} testId="cost-per-mtok-reserved" />
        <Figure label="Budget buys" e={cost.budgetComputeHours} testId="cost-budget-compute-hours" />
        {/* Hours to the gate: in the budget figures below, from the budget service (what a change moves at once). */}
      </dl>
      <BudgetFigures host={cost.host} onChanged={changed} />
    </>
  );
}

/** The fleet's monthly budget and estimated spend this month (UTC), for the fleet summary. */
export function FleetBudgetFigure(): React.JSX.Element | null {
  const services = useContext(AppContext);
  const transport = services?.transport ?? null;
  const [line, setLine] = useState<BudgetLine | null>(null);
  useEffect(() => {
    if (transport === null) return;
    let live = true;
    const run = () =>
      transport.invoke('budget.get', {}).then(
        (s) => live && setLine(s.fleet),
        () => undefined,
      );
    void run();
    const timer = setInterval(() => void run(), 15_000);
    return () => {
      live = false;
      clearInterval(timer);
    };
  }, [transport]);
  if (line === null || line.monthlyUsd === null) return null;
  return (
    <div data-testid="fleet-budget" title="Estimate: price per hour × time seen connected, this calendar month (UTC)">
      <dt>Fleet budget</dt>
      <dd className="num">
        {line.spentUsd === null ? 'spend unknown' : formatUsd(line.spentUsd)} of {formatUsd(line.monthlyUsd)} est.{line.pctUsed === null ? '' : ` (${line.pctUsed.toFixed(0)} %)`}
      </dd>
    </div>
  );
}
