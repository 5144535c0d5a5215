import { memo } from 'react';
import type { ServiceView } from '../../../../src-preload/contract/index.js';
import { ServiceRow } from './ServiceRow.js';

export interface ServiceTableProps {
  readonly label: string;
  readonly services: readonly ServiceView[];
  readonly pollIntervalMs?: number | null;
}

export const ServiceTable = memo(function ServiceTable({ label, services, pollIntervalMs = null }: ServiceTableProps): React.JSX.Element {
  return (
    <section className="panel" aria-label={`${label} model services`}>
      <h3 className="panel__title">Model services</h3>
      {services.length === 0 ? (
        <p className="muted panel__empty">No model services configured on this host.</p>
      ) : (
        <table className="data-table service-table">
          <thead>
            <tr>
              <th scope="col">Model</th>
              <th scope="col" className="col-tunnel">Tunnel</th>
              <th scope="col" className="col-state">State</th>
              <th scope="col" className="col-num" title="Requests running / waiting">
                Run / wait
              </th>
              <th scope="col" className="col-kv">KV cache</th>
              <th scope="col" className="col-num" title="Generation tokens per second">
                Gen tok/s
              </th>
              <th scope="col" className="col-num col-prompt" title="Prompt tokens per second">
                Prompt tok/s
              </th>
              <th scope="col" className="col-num" title="Time to first token, p95 over the last minute">
                TTFT p95
              </th>
              <th scope="col" className="col-num col-cost" title="Estimated cost per 1M output tokens (busy time, last 5 minutes)">
                $/1M tok
              </th>
              <th scope="col" className="col-spark" title="Generation tokens per second, last two minutes">
                Gen · 2 min
              </th>
            </tr>
          </thead>
          <tbody>
            {services.map((service) => (
              <ServiceRow key={service.id} label={label} service={service} pollIntervalMs={pollIntervalMs} />
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
});
