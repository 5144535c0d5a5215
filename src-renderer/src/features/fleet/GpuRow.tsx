import { memo } from 'react';
import type { GpuView } from '../../../../src-preload/contract/index.js';
import { MeterBar } from '../../components/MeterBar.js';
import { dataValue, formatMemory, formatPct, formatPower, formatTemp, ratioPct } from '../../format/format.js';

export interface GpuRowProps {
  readonly label: string;
  readonly gpu: GpuView;
}

export const GpuRow = memo(function GpuRow({ label, gpu }: GpuRowProps): React.JSX.Element {
  const hot = gpu.temperatureC !== null && gpu.temperatureC >= 85;
  return (
    <tr data-testid={`gpu-row-${label}-${gpu.index}`}>
      <td className="col-idx num">{gpu.index}</td>
      <td className="gpu-name" title={gpu.uuid ?? undefined}>
        {gpu.name}
      </td>
      <td className="col-vram">
        <MeterBar
          pct={ratioPct(gpu.memoryUsedMiB, gpu.memoryTotalMiB)}
          text={formatMemory(gpu.memoryUsedMiB, gpu.memoryTotalMiB)}
          label="VRAM"
          testId="vram"
          value={gpu.memoryUsedMiB}
          warnAt={96}
          alarmAt={99}
        />
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
