// One cell per GPU: VRAM used (top bar) and utilisation (bottom bar); a hot
// GPU is outlined and marked with a triangle, a throttling one hatched, one
// with unknown figures dashed — shape as well as colour. A cell re-renders
// only when its GPU's view changes.
import { memo } from 'react';
import type { GpuView } from '../../../../../src-preload/contract/index.js';
import { HOT_GPU_C } from './host-trouble.js';

const pct = (used: number | null, total: number | null): number | null => (used !== null && total !== null && total > 0 ? Math.min(100, (used / total) * 100) : null);

export function gpuCellTitle(g: GpuView): string {
  const vram = pct(g.memoryUsedMiB, g.memoryTotalMiB);
  const parts = [
    `GPU ${g.index}`,
    `VRAM ${vram === null ? 'unknown' : `${Math.round(vram)} %`}`,
    `util ${g.utilizationPct === null ? 'unknown' : `${Math.round(g.utilizationPct)} %`}`,
    g.temperatureC === null ? 'temperature unknown' : `${Math.round(g.temperatureC)} °C`,
  ];
  if (g.faults?.slowdownSinceMs != null) parts.push('throttling');
  return parts.join(', ');
}

const GpuCell = memo(function GpuCell({ gpu }: { readonly gpu: GpuView }): React.JSX.Element {
  const vram = pct(gpu.memoryUsedMiB, gpu.memoryTotalMiB);
  const util = gpu.utilizationPct;
  const hot = gpu.temperatureC !== null && gpu.temperatureC >= HOT_GPU_C;
  const throttled = gpu.faults?.slowdownSinceMs != null;
  const unknown = vram === null && util === null;
  const cls = ['ov-gpu', hot ? 'ov-gpu--hot' : '', throttled ? 'ov-gpu--throttle' : '', unknown ? 'ov-gpu--unknown' : ''].filter(Boolean).join(' ');
  return (
    <span className={cls} title={gpuCellTitle(gpu)} data-testid="ov-gpu" data-hot={hot ? 'true' : undefined}>
      {/* scaleX, not width: a tick moves 8 bars per host without laying the grid out again */}
      <span className="ov-gpu__bar ov-gpu__bar--vram" style={{ transform: `scaleX(${(vram ?? 0) / 100})` }} />
      <span className="ov-gpu__bar ov-gpu__bar--util" style={{ transform: `scaleX(${(util ?? 0) / 100})` }} />
    </span>
  );
});

export const GpuStrip = memo(function GpuStrip({ gpus }: { readonly gpus: readonly GpuView[] }): React.JSX.Element {
  return (
    <span className="ov-gpus" aria-hidden="true">
      {gpus.map((g) => (
        <GpuCell key={g.index} gpu={g} />
      ))}
    </span>
  );
});
