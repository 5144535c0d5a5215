// The latency chart of the host view, per service: the server's histogram
// lines where it has any in the range, else the lines the proxy measured for
// that model (labelled so), else none and the reason — chosen by the same
// function as the service's figures (chooseLatency in the contract). Lines not
// chosen stay as empty series, so the chart's series ids do not move.
import { chooseLatency, latencySeries, type LatencyFigures, type ServiceKind } from '../../../../src-preload/contract/latency.js';
import { parseSeriesName, seriesMatcher } from '../../../../src-preload/contract/series-names.js';
import type { Point } from './host-panels.js';

export interface LatencyPanelView {
  readonly lines: ReadonlyMap<string, Point[]>;
  /** "coder: measured at the proxy" per service shown from the proxy's figures. */
  readonly notes: readonly string[];
  /** Why the chart is empty, per service; null when a line has data. */
  readonly reason: string | null;
}

const isLatency = seriesMatcher({ svc: ['ttft_p50_s', 'ttft_p95_s', 'e2e_p50_s', 'e2e_p95_s', 'proxy_ttft_p50_s', 'proxy_ttft_p95_s', 'proxy_e2e_p50_s', 'proxy_e2e_p95_s'] });
const EMPTY: Point[] = [];

function lastKnown(points: readonly Point[] | undefined): number | null {
  if (points === undefined) return null;
  for (let i = points.length - 1; i >= 0; i--) if (points[i]![1] !== null) return points[i]![1];
  return null;
}

function figuresOf(lines: ReadonlyMap<string, Point[]>, names: Record<keyof LatencyFigures, string>): LatencyFigures {
  return {
    ttftP50S: lastKnown(lines.get(names.ttftP50S)),
    ttftP95S: lastKnown(lines.get(names.ttftP95S)),
    e2eP50S: lastKnown(lines.get(names.e2eP50S)),
    e2eP95S: lastKnown(lines.get(names.e2eP95S)),
  };
}

/** `kinds`: each service's server kind (for the reason's words); services only named there still get a reason. */
export function latencyPanelView(lines: ReadonlyMap<string, Point[]>, kinds: Readonly<Record<string, ServiceKind>> = {}): LatencyPanelView {
  const ids = new Set(Object.keys(kinds));
  for (const metric of lines.keys()) {
    const name = isLatency(metric) ? parseSeriesName(metric) : null;
    if (name?.scope === 'svc') ids.add(name.serviceId);
  }
  const out = new Map<string, Point[]>();
  const notes: string[] = [];
  const reasons: string[] = [];
  let anyData = false;
  for (const id of [...ids].sort()) {
    const names = latencySeries(id);
    const choice = chooseLatency(kinds[id] ?? null, figuresOf(lines, names.server), figuresOf(lines, names.proxy), 'in this range');
    const kept = new Set(choice.basis === null ? [] : Object.values(names[choice.basis]));
    for (const metric of [...Object.values(names.server), ...Object.values(names.proxy)]) {
      const pts = lines.get(metric);
      if (pts !== undefined) out.set(metric, kept.has(metric) ? pts : EMPTY);
    }
    if (choice.basis === 'proxy') notes.push(`${id}: ${choice.label}`);
    if (choice.basis === null) reasons.push(ids.size > 1 ? `${id}: ${choice.detail}` : choice.detail);
    else anyData = true;
  }
  const reason = anyData || reasons.length === 0 ? null : `No data — ${reasons.join('; ')}.`;
  return { lines: out, notes, reason };
}
