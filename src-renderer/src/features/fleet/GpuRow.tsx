import { memo } from 'react';
import type { GpuVendor, GpuView } from '../../../../src-preload/contract/index.js';
import { MeterBar } from '../../components/MeterBar.js';
import { dataValue, formatPct, formatPower, formatTemp } from '../../format/format.js';
import { gpuMemoryBars } from './gpu-memory.js';

export interface GpuRowProps {
  readonly label: string;
  readonly gpu: GpuView;
  readonly hostVendor?: GpuVendor | null;
}

export const GpuRow = memo(function GpuRow({ label, gpu, hostVendor }: GpuRowProps): React.JSX.Element {
  const hot = gpu.temperatureC !== null && gpu.temperatureC >= 85;
  const bars = gpuMemoryBars(gpu, hostVendor);
  return (
    <tr data-testid={`gpu-row-${label}-${gpu.index}`}>
      <td className="col-idx num">{gpu.index}</td>
      <td className="gpu-name" title={gpu.uuid ? `${gpu.name} · ${gpu.uuid}` : gpu.name}>
        {gpu.name}
      </td>
      <td className="col-vram">
        {bars.length === 1 ? (
          <MeterBar pct={bars[0]!.pct} text={bars[0]!.text} label="VRAM" testId="vram" value={bars[0]!.usedMiB} warnAt={96} alarmAt={99} />
        ) : (
          <div className="mem-bars">
            {bars.map((b) => (
              <div key={b.kind} className="mem-bar" title={b.title}>
                <span className="mem-bar__label">{b.label}</span>
                <MeterBar pct={b.pct} text={b.text} label={b.label} testId={b.kind} value={b.usedMiB} warnAt={96} alarmAt={99} />
              </div>
            ))}
          </div>
        )}
      </td>
      <td className="col-util">
        <MeterBar pct={gpu.utilizationPct} text={formatPct(gpu.utilizationPct)} label="Utilisation" testId="util" warnAt={101} alarmAt={101} />
      </td>
      <td className="col-num num" data-testid="power" data-value={dataValue(gpu.powerW)}>
        {formatPower(gpu.powerW, gpu.powerLimitW)}
      </td>
      <td className={`col-num num${hot ? ' text-warn' : ''}`} data-testid="temp" data-value={dataValue(gpu.temperatureC)}>
        {formatTemp(gpu.temperatureC)}
      </td>
    </tr>
  );
});
