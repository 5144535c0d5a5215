// The host's figures now, above its charts: GPUs (vendor, VRAM/GTT, where
// from), one card per model service, then the host's health, flags, GPU
// processes and faults. Re-renders per fleet tick; the charts
// beside it do not.
import type { HostView } from '../../../../src-preload/contract/index.js';
import { GpuTable } from '../fleet/GpuTable.js';
import { GpuFaultsPanel } from './GpuFaultsPanel.js';
import { GpuProcessTable } from './GpuProcessTable.js';
import { HostHealthPanel } from './HostHealthPanel.js';
import { ProcessFlags } from './ProcessFlags.js';
import { ServiceDetail } from './ServiceDetail.js';

export interface HostFiguresProps {
  readonly host: HostView;
  readonly pollIntervalMs: number | null;
}

export function HostFigures({ host, pollIntervalMs }: HostFiguresProps): React.JSX.Element {
  return (
    <div className="host-figures" data-testid="host-figures">
      <div className="host-figures__gpus">
        <GpuTable
          label={host.label}
          gpus={host.gpus}
          stale={host.gpuStale}
          staleReason={host.gpuStaleReason}
          vendor={host.gpuVendor ?? null}
          source={host.gpuSource ?? null}
          issues={host.gpuIssues}
          pollIntervalMs={pollIntervalMs}
        />
      </div>
      {host.services.length > 0 ? (
        <div className="host-figures__services">
          {host.services.map((s) => (
            <ServiceDetail key={s.id} host={host.label} service={s} pollIntervalMs={pollIntervalMs} />
          ))}
        </div>
      ) : null}
      <ProcessFlags flags={host.gpuProcesses?.flags} />
      <div className="host-figures__health">
        <HostHealthPanel health={host.health} />
        <GpuProcessTable host={host} />
        <GpuFaultsPanel host={host} />
      </div>
    </div>
  );
}
