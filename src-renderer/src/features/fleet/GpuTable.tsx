import { memo } from 'react';
import type { GpuView } from '../../../../src-preload/contract/index.js';
import { Badge } from '../../components/Badge.js';
import { GpuRow } from './GpuRow.js';

export interface GpuTableProps {
  readonly label: string;
  readonly gpus: readonly GpuView[];
  readonly stale: boolean;
  readonly staleReason: string | null;
}

export const GpuTable = memo(function GpuTable({ label, gpus, stale, staleReason }: GpuTableProps): React.JSX.Element {
  return (
    <section className="panel" aria-label={`${label} GPUs`}>
      <h3 className="panel__title">
        GPUs
        {stale ? (
          <Badge tone="warn" testId="gpu-stale" title={staleReason ?? undefined}>
            stale
          </Badge>
        ) : null}
        {stale && staleReason ? <span className="stale-reason">{staleReason}</span> : null}
      </h3>
      {gpus.length === 0 ? (
        <p className="muted panel__empty">No GPU data yet.</p>
      ) : (
        <table className={`data-table gpu-table${stale ? ' is-stale' : ''}`}>
          <thead>
            <tr>
              <th scope="col" className="col-idx">#</th>
              <th scope="col">GPU</th>
              <th scope="col" className="col-vram">VRAM</th>
              <th scope="col" className="col-util">Util</th>
              <th scope="col" className="col-num">Power</th>
              <th scope="col" className="col-num">Temp</th>
            </tr>
          </thead>
          <tbody>
            {gpus.map((gpu) => (
              <GpuRow key={gpu.index} label={label} gpu={gpu} />
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
});
