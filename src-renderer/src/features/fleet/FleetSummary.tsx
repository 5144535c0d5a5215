import { useShallow } from 'zustand/react/shallow';
import { useAppStore } from '../../app/app-context.js';
import { dataValue, formatCount, formatTokPerS, formatUsdPerHour } from '../../format/format.js';
import { fleetTotals } from './fleet-summary.js';
import { FleetBudgetFigure } from '../host/CostFigures.js';

export function FleetSummary(): React.JSX.Element {
  const t = useAppStore(useShallow((s) => fleetTotals(s.fleet.snapshot)));
  return (
    <dl className="fleet-summary" data-testid="fleet-summary">
      <div>
        <dt>Hosts</dt>
        <dd className="num">
          {t.connected}/{t.hosts} connected
        </dd>
      </div>
      <div>
        <dt>GPUs</dt>
        <dd className="num">{t.gpus}</dd>
      </div>
      <div>
        <dt>Services</dt>
        <dd className="num">
          {t.awake}/{t.services} awake
        </dd>
      </div>
      <div>
        <dt>Requests</dt>
        <dd className="num">
          {formatCount(t.running)} running · {formatCount(t.waiting)} waiting
        </dd>
      </div>
      <div>
        <dt>Generation</dt>
        <dd className="num" data-testid="fleet-tokps" data-value={dataValue(t.generationTokensPerS)}>
          {formatTokPerS(t.generationTokensPerS)} tok/s
        </dd>
      </div>
      <div>
        <dt>Run rate (est.)</dt>
        <dd className="num">{formatUsdPerHour(t.pricePerHourUsd)}</dd>
      </div>
      <FleetBudgetFigure />
    </dl>
  );
}
