// A service's TTFT and end-to-end latency in the host view, with where they
// come from: the server's histograms, or "measured at the proxy" where the
// server keeps none (llama-server), or "—" and the reason (rows of a <dl>).
import type { ServiceView } from '../../../../src-preload/contract/index.js';
import { DASH, dataValue } from '../../format/format.js';
import { formatSeconds } from '../fleet/live-figures.js';
import { useServiceLatency } from '../fleet/use-service-latency.js';

const pair = (a: number | null, b: number | null): string => (a === null && b === null ? DASH : `${a === null ? DASH : formatSeconds(a)} / ${b === null ? DASH : formatSeconds(b)}`);

export function LatencyFacts({ host, service }: { readonly host: string; readonly service: Pick<ServiceView, 'id' | 'kind'> }): React.JSX.Element {
  const l = useServiceLatency(host, service.id, service.kind);
  return (
    <>
      <div>
        <dt>TTFT p50 / p95</dt>
        <dd className="num" data-testid="latency-ttft" data-basis={l.basis ?? ''} data-value={dataValue(l.ttftP95S)} title={l.detail}>
          {pair(l.ttftP50S, l.ttftP95S)}
        </dd>
      </div>
      <div>
        <dt>End-to-end p50 / p95</dt>
        <dd className="num" data-testid="latency-e2e" data-basis={l.basis ?? ''} data-value={dataValue(l.e2eP95S)} title={l.detail}>
          {pair(l.e2eP50S, l.e2eP95S)}
        </dd>
      </div>
      <div>
        <dt>Latency from</dt>
        <dd data-testid="latency-source" data-value={l.basis ?? ''} title={l.detail}>
          {l.label ?? <span className="muted">{`${DASH} ${l.detail}`}</span>}
        </dd>
      </div>
    </>
  );
}
