import { memo } from 'react';
import type { FigureSource, GpuVendor, GpuView } from '../../../../src-preload/contract/index.js';
import { Badge } from '../../components/Badge.js';
import { SourceLine } from '../../components/SourceLine.js';
import { GpuRow } from './GpuRow.js';
import { showsGtt, VENDOR_NAME } from './gpu-memory.js';

export interface GpuTableProps {
  readonly label: string;
  readonly gpus: readonly GpuView[];
  readonly stale: boolean;
  readonly staleReason: string | null;
  readonly vendor?: GpuVendor | null;
  readonly source?: FigureSource | null;
  readonly pollIntervalMs?: number | null;
  /** Why some figures of the last (partial) reading are unknown. */
  readonly issues?: readonly string[];
}

export const GpuTable = memo(function GpuTable({ label, gpus, stale, staleReason, vendor, source, pollIntervalMs = null, issues }: GpuTableProps): React.JSX.Element {
  const withGtt = gpus.some((g) => showsGtt(g, vendor));
  return (
    <section className="panel" aria-label={`${label} GPUs`}>
      <h3 className="panel__title">
        GPUs
        {vendor ? (
          <Badge tone="neutral" testId="gpu-vendor" value={vendor} title={`GPU vendor: ${VENDOR_NAME[vendor]}`}>
            {VENDOR_NAME[vendor]}
          </Badge>
        ) : null}
        {stale ? (
          <Badge tone="warn" testId="gpu-stale" title={staleReason ?? undefined}>
            stale
          </Badge>
        ) : null}
        {stale && staleReason ? <span className="stale-reason">{staleReason}</span> : null}
        {!stale && issues && issues.length > 0 ? (
          <Badge tone="warn" testId="gpu-partial" title={issues.join('\n')}>
            partial
          </Badge>
        ) : null}
        {!stale && issues && issues.length > 0 ? <span className="stale-reason" data-testid="gpu-partial-reason">{issues[0]}</span> : null}
        {source ? <SourceLine source={source} pollIntervalMs={pollIntervalMs} testId="gpu-source" subject="GPU figures" /> : null}
      </h3>
      {gpus.length === 0 ? (
        <p className="muted panel__empty">No GPU data yet.</p>
      ) : (
        <table className={`data-table gpu-table${stale ? ' is-stale' : ''}`}>
          <thead>
            <tr>
              <th scope="col" className="col-idx">#</th>
              <th scope="col">GPU</th>
              <th scope="col" className="col-vram" title={withGtt ? 'VRAM and GTT (system memory the GPU maps), used / total' : undefined}>
                {withGtt ? 'Memory' : 'VRAM'}
              </th>
              <th scope="col" className="col-util">Util</th>
              <th scope="col" className="col-num">Power</th>
              <th scope="col" className="col-num">Temp</th>
            </tr>
          </thead>
          <tbody>
            {gpus.map((gpu) => (
              <GpuRow key={gpu.index} label={label} gpu={gpu} hostVendor={vendor} />
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
});
