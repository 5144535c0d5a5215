// One service's TTFT / end-to-end latency from the latest telemetry tick, as
// chooseLatency (the contract) decides: the server's histograms, else what the
// proxy measured for the model, else none with the reason. The fleet card and
// the host view read it here, so both say the same.
import { useCallback, useMemo, useSyncExternalStore } from 'react';
import { useServices } from '../../app/app-context.js';
import { chooseLatency, latencySeries, type LatencyChoice, type LatencyFigures, type ServiceKind } from '../../../../src-preload/contract/latency.js';
import { serviceSeries } from '../../../../src-preload/contract/series-names.js';
import { LiveFigures, liveFiguresFor } from './live-figures.js';

export interface ServiceLatency extends LatencyChoice {
  /** The histogram bucket bound the server's TTFT p95 falls under; null unless the basis is the server. */
  readonly ttftP95BoundS: number | null;
}

const FIELDS: readonly (keyof LatencyFigures)[] = ['ttftP50S', 'ttftP95S', 'e2eP50S', 'e2eP95S'];

export function useServiceLatency(host: string, serviceId: string, kind: ServiceKind): ServiceLatency {
  const { transport } = useServices();
  const live = liveFiguresFor(transport);
  const metrics = useMemo(() => {
    const names = latencySeries(serviceId);
    return [...FIELDS.map((f) => names.server[f]), ...FIELDS.map((f) => names.proxy[f]), serviceSeries(serviceId, 'ttft_p95_le_s')];
  }, [serviceId]);
  const keys = useMemo(() => metrics.map((m) => LiveFigures.key(host, m)), [host, metrics]);
  const subscribe = useCallback(
    (cb: () => void) => {
      const offs = keys.map((k) => live.subscribe(k, cb));
      return () => offs.forEach((off) => off());
    },
    [live, keys],
  );
  // A string snapshot: React compares it by value, so a tick that changes nothing renders nothing.
  const snapshot = useSyncExternalStore(subscribe, () => keys.map((k) => String(live.get(k) ?? null)).join('|'));
  return useMemo(() => {
    const v = snapshot.split('|').map((x) => (x === 'null' ? null : Number(x)));
    const at = (i: number): number | null => v[i] ?? null;
    const server: LatencyFigures = { ttftP50S: at(0), ttftP95S: at(1), e2eP50S: at(2), e2eP95S: at(3) };
    const proxy: LatencyFigures = { ttftP50S: at(4), ttftP95S: at(5), e2eP50S: at(6), e2eP95S: at(7) };
    const choice = chooseLatency(kind, server, proxy);
    return { ...choice, ttftP95BoundS: choice.basis === 'server' ? at(8) : null };
  }, [snapshot, kind]);
}
