// vLLM data-parallel: one row per engine, so an engine that queues while its
// siblings idle is seen (the service's own figures are sums and means).
import type { EngineView } from '../../../../src-preload/contract/index.js';
import { MeterBar } from '../../components/MeterBar.js';
import { dataValue, formatCount, formatPct, formatTokPerS } from '../../format/format.js';

export interface EngineTableProps {
  readonly serviceId: string;
  readonly engines: readonly EngineView[];
  readonly stale: boolean;
}

export function EngineTable({ serviceId, engines, stale }: EngineTableProps): React.JSX.Element {
  return (
    <table className={`data-table engine-table${stale ? ' is-stale' : ''}`} data-testid={`engines-${serviceId}`} aria-label={`${serviceId}: figures per data-parallel engine`}>
      <thead>
        <tr>
          <th scope="col">Engine</th>
          <th scope="col" className="col-num">Running</th>
          <th scope="col" className="col-num">Waiting</th>
          <th scope="col" className="col-kv">KV cache</th>
          <th scope="col" className="col-num" title="Generation tokens per second">
            Gen tok/s
          </th>
        </tr>
      </thead>
      <tbody>
        {engines.map((e) => (
          <tr key={e.engine} data-testid={`engine-${serviceId}-${e.engine}`}>
            <th scope="row" className="engine-table__id">
              {e.engine}
            </th>
            <td className="col-num num" data-testid="engine-running" data-value={dataValue(e.requestsRunning)}>
              {formatCount(e.requestsRunning)}
            </td>
            <td className={`col-num num${e.requestsWaiting ? ' text-warn' : ''}`} data-testid="engine-waiting" data-value={dataValue(e.requestsWaiting)}>
              {formatCount(e.requestsWaiting)}
            </td>
            <td className="col-kv">
              <MeterBar pct={e.kvCachePct} text={formatPct(e.kvCachePct, e.kvCachePct !== null && e.kvCachePct < 10 ? 1 : 0)} label={`Engine ${e.engine} KV cache`} testId="engine-kv" />
            </td>
            <td className="col-num num" data-testid="engine-tokps" data-value={dataValue(e.generationTokensPerS)}>
              {formatTokPerS(e.generationTokensPerS)}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
