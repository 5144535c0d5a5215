// A host's cost estimates. Every figure says "estimate"; unavailable ones say why.
import type { Estimate, HostCost } from '../../../../src-preload/contract/telemetry.js';
import { formatEstimate } from './cost-format.js';

function Figure({ label, e, testId }: { label: string; e: Estimate; testId: string }): React.JSX.Element {
  return (
    <div className="host-cost__fig" data-testid={testId} data-value={e.value ?? ''} title={e.value === null ? (e.unavailableReason ?? '') : e.basis}>
      <dt>{label}</dt>
      <dd className="num">{formatEstimate(e)}</dd>
    </div>
  );
}

export function CostFigures({ cost }: { readonly cost: HostCost | null }): React.JSX.Element {
  if (cost === null) return <p className="host-cost muted">Cost: unavailable (estimate)</p>;
  return (
    <dl className="host-cost" aria-label="Cost estimates">
      <Figure label="Run rate" e={cost.perHour} testId="cost-per-hour" />
      <Figure label="Per day" e={cost.perDay} testId="cost-per-day" />
      <Figure label="Per month" e={cost.perMonth} testId="cost-per-month" />
      <Figure label="Per 1M output tok (busy)" e={cost.perMillionOutputUsageBased} testId="cost-per-mtok-usage" />
      <Figure label="Per 1M output tok (all time)" e={cost.perMillionOutputReservationBased} testId="cost-per-mtok-reserved" />
      <Figure label="Hours to budget gate" e={cost.hoursUntilBudgetGate} testId="cost-budget-hours" />
    </dl>
  );
}
