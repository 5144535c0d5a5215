// What a report takes from the fleet's host-health state and the logs
// capability at export. Host health is rendered as the screen shows it: the
// same view function the fleet's snapshot uses (hostViewOf), so a figure in a
// signed report is the figure the operator saw, with its own reading time; the
// report keeps only the health, process and fault parts of that view. Log
// lines come from the logs capability's tail, masked there.
import type { EvidenceHostState, LogsTailResult } from '../../../src-preload/contract/index.js';
import { isAppError } from '../base/index.js';
import { hostViewOf, type HostState } from '../fleet/index.js';
import type { ServiceLogReader } from './log-excerpts.js';

export function hostStateOf(label: string, host: HostState | undefined): EvidenceHostState {
  if (!host) return { host: label, connection: 'unknown', health: null, gpus: [], gpuProcesses: null };
  const view = hostViewOf(host);
  return {
    host: label,
    connection: view.state,
    health: view.health ?? null,
    gpus: view.gpus.map((g) => ({ index: g.index, name: g.name, processes: g.processes ?? null, faults: g.faults ?? null })),
    gpuProcesses: view.gpuProcesses ?? null,
  };
}

/** The largest tail the logs capability gives: the window's lines are cut from it. */
export const LOG_READ_LINES = 5000;

export interface LogTail {
  tail(label: string, serviceId: string, options: { lines: number; sinceMs?: number; signal?: AbortSignal }): Promise<LogsTailResult>;
}

/** Reads a service's lines since a time through the logs capability; a source or host that cannot answer says why. */
export function serviceLogReader(logs: LogTail): ServiceLogReader {
  return async (host, serviceId, sinceMs, signal) => {
    try {
      const r = await logs.tail(host, serviceId, { lines: LOG_READ_LINES, sinceMs, signal });
      const lines = r.entries.flatMap((e) => (e.type === 'line' ? [e] : []));
      return { source: r.source, lines, truncated: r.scanned >= LOG_READ_LINES, problem: null };
    } catch (err) {
      if (!isAppError(err)) throw err;
      return { source: null, lines: [], truncated: false, problem: `${err.code}: ${err.message}` };
    }
  };
}
