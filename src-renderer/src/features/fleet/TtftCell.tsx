// The fleet card's TTFT p95: the server's histogram bucket bound ("≤ 250 ms",
// all the buckets can say for sure), or what the proxy measured for the model
// where the server keeps no histograms (marked "proxy"), or "—" with the reason.
import { dataValue } from '../../format/format.js';
import type { ServiceKind } from '../../../../src-preload/contract/latency.js';
import { formatSeconds } from './live-figures.js';
import { useServiceLatency } from './use-service-latency.js';

const WHAT = 'Time to first token, p95 over the last minute';

export interface TtftCellProps {
  readonly host: string;
  readonly serviceId: string;
  readonly kind: ServiceKind;
}

export function TtftCell({ host, serviceId, kind }: TtftCellProps): React.JSX.Element {
  const l = useServiceLatency(host, serviceId, kind);
  if (l.basis === 'server') {
    const bound = l.ttftP95BoundS;
    const tip =
      bound === null
        ? `${WHAT}: from the server's histograms, interpolated (no bucket bound reported)`
        : `${WHAT}: from the server's histogram buckets — at most ${formatSeconds(bound)} (the bucket it falls in)${l.ttftP95S !== null ? `; interpolated inside the bucket ≈ ${formatSeconds(l.ttftP95S)}` : ''}`;
    return (
      <span data-testid="ttft-p95" data-basis="server" data-value={dataValue(bound)} data-interpolated={dataValue(l.ttftP95S)} title={tip}>
        {bound !== null ? `≤ ${formatSeconds(bound)}` : l.ttftP95S !== null ? `≈ ${formatSeconds(l.ttftP95S)}` : '—'}
      </span>
    );
  }
  if (l.basis === 'proxy' && l.ttftP95S !== null) {
    return (
      <div data-testid="ttft-p95" data-basis="proxy" data-value={dataValue(l.ttftP95S)} title={`${WHAT}: ${l.detail}`}>
        {formatSeconds(l.ttftP95S)}
        {/* under the figure, like the KV estimate's mark; right-aligned with the column */}
        <div className="kv-est" data-testid="ttft-basis" style={{ marginLeft: 'auto' }}>
          at proxy
        </div>
      </div>
    );
  }
  // The proxy's figures may hold only end-to-end times (no streamed answer in the window).
  const why = l.basis === 'proxy' ? `no streamed answer went through the console's proxy in the last minute (end-to-end figures in the host view)` : l.detail;
  return (
    <span data-testid="ttft-p95" data-basis={l.basis ?? ''} data-value="" title={`${WHAT}: unavailable — ${why}`}>
      —
    </span>
  );
}
