// The baselines the degradation rule compares against (alerts.list), so an
// operator can see what "slower" means for each model before trusting a page.
import { useEffect, useState } from 'react';
import type { Baseline } from '../../../../src-preload/contract/index.js';
import { useServices } from '../../app/app-context.js';
import { formatTimestamp } from '../../format/format.js';
import { toContractError } from '../../transport/transport.js';
import { baselineLevelsText } from './baselines.js';

export function BaselinesTable(): React.JSX.Element {
  const { transport } = useServices();
  const [baselines, setBaselines] = useState<readonly Baseline[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    transport
      .invoke('alerts.list', {})
      .then((r) => live && setBaselines(r.baselines))
      .catch((err: unknown) => {
        const e = toContractError(err);
        if (live) setError(`${e.code}: ${e.message}`);
      });
    return () => {
      live = false;
    };
  }, [transport]);
  return (
    <section aria-labelledby="alerts-baselines-title" data-testid="alerts-baselines">
      <h3 id="alerts-baselines-title">Baselines ({baselines?.length ?? '…'})</h3>
      {error ? <p className="inline-error">{error}</p> : null}
      {baselines !== null && baselines.length === 0 ? (
        <p className="muted">None: the slowdown rule judges no model. Mark a benchmark run as its model&apos;s baseline (Benchmarks → Baseline).</p>
      ) : null}
      {baselines !== null && baselines.length > 0 ? (
        <table className="data-table alerts-table">
          <thead>
            <tr>
              <th scope="col">Model</th>
              <th scope="col">Per sequence, by load</th>
              <th scope="col">From</th>
              <th scope="col">Set</th>
            </tr>
          </thead>
          <tbody>
            {baselines.map((b) => {
              const levels = baselineLevelsText(b);
              return (
                <tr key={b.model} data-testid="alerts-baseline-row">
                  <td>{b.model}</td>
                  <td className={levels.compared ? undefined : 'muted'}>{levels.text}</td>
                  <td>
                    {b.source} ({b.tokPerS.toFixed(1)} tok/s in all)
                  </td>
                  <td>{formatTimestamp(b.setAt)}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}
