// Which TTFT / end-to-end latency a service shows, and how it is labelled: the
// server's own histograms where it keeps them (vLLM), else what the console's
// proxy measured for that model, else "—" with the reason. One function for
// the fleet card, the host view (figures and chart) and any report.
import { serviceSeries, type ServiceFigure, type ServiceSeriesName } from './series-names.js';
import { SERVICE_KIND_NAME, type ServiceKind } from './service-kind.js';

export type { ServiceKind };

/** Seconds; null when unknown. */
export interface LatencyFigures {
  readonly ttftP50S: number | null;
  readonly ttftP95S: number | null;
  readonly e2eP50S: number | null;
  readonly e2eP95S: number | null;
}

export type LatencyBasis = 'server' | 'proxy';

export interface LatencyChoice extends LatencyFigures {
  readonly basis: LatencyBasis | null;
  /** "vLLM histograms" / "measured at the proxy"; null when neither has a figure. */
  readonly label: string | null;
  /** What the chosen figures are, for a tooltip; or why there are none. */
  readonly detail: string;
}

export const NO_LATENCY: LatencyFigures = { ttftP50S: null, ttftP95S: null, e2eP50S: null, e2eP95S: null };

export const PROXY_LATENCY_LABEL = 'measured at the proxy';


const known = (f: LatencyFigures): boolean => f.ttftP50S !== null || f.ttftP95S !== null || f.e2eP50S !== null || f.e2eP95S !== null;

/**
 * The server's figures when it has any; else the proxy's; else none, with the
 * real reason. `span` says over what the figures were taken ("in the last
 * minute", "in this range"). A kind not known here (null) is named generically.
 */
export function chooseLatency(kind: ServiceKind | null, server: LatencyFigures, proxy: LatencyFigures, span = 'in the last minute'): LatencyChoice {
  const name = kind === null ? 'the server' : SERVICE_KIND_NAME[kind];
  if (known(server)) {
    return {
      ...pick(server),
      basis: 'server',
      label: `${name} histograms`,
      detail: `from ${name}'s own latency histograms ${span} (TTFT: the bucket bound it falls under, interpolated inside)`,
    };
  }
  if (known(proxy)) {
    const why = noHistograms(kind) ?? `${name} reported no latency ${span}`;
    return {
      ...pick(proxy),
      basis: 'proxy',
      label: PROXY_LATENCY_LABEL,
      detail: `${why}: measured at the console's proxy ${span}, from each request's arrival (queue wait included); TTFT from streamed answers only`,
    };
  }
  const serverPart = kind === 'llama-server' ? 'llama-server has no latency histograms' : (noHistograms(kind) ?? `no request finished on ${name} ${span}`);
  return { ...NO_LATENCY, basis: null, label: null, detail: `${serverPart}, and no request went through the console's proxy ${span}` };
}

/** Why a kind of server never has latency histograms; null when it may. */
function noHistograms(kind: ServiceKind | null): string | null {
  if (kind === 'llama-server') return 'llama-server keeps no latency histograms';
  if (kind === 'openai') return 'an OpenAI-compatible server (kind openai) exports no figures the console reads';
  return null;
}

function pick(f: LatencyFigures): LatencyFigures {
  return { ttftP50S: f.ttftP50S, ttftP95S: f.ttftP95S, e2eP50S: f.e2eP50S, e2eP95S: f.e2eP95S };
}

/** The series of one service's latency figures, from its server and from the proxy (`svc.<id>.…`). */
export function latencySeries(serviceId: string): { server: Record<keyof LatencyFigures, ServiceSeriesName>; proxy: Record<keyof LatencyFigures, ServiceSeriesName> } {
  const n = (f: ServiceFigure) => serviceSeries(serviceId, f);
  return {
    server: { ttftP50S: n('ttft_p50_s'), ttftP95S: n('ttft_p95_s'), e2eP50S: n('e2e_p50_s'), e2eP95S: n('e2e_p95_s') },
    proxy: { ttftP50S: n('proxy_ttft_p50_s'), ttftP95S: n('proxy_ttft_p95_s'), e2eP50S: n('proxy_e2e_p50_s'), e2eP95S: n('proxy_e2e_p95_s') },
  };
}
