import { toAppError } from '../base/index.js';
import { TelemetryErrorCode } from './errors.js';
import type { UpstreamClient } from '../upstream/index.js';
import { fetchText, type HttpScrapeOptions, type HttpText } from './http-scrape.js';
import type { SourceReading, StaleReason } from './readings.js';

// One interface for everything that produces telemetry, so that a Prometheus
// HTTP API source (fleets that already run Prometheus / DCGM exporters) or a
// Kubernetes source plugs in beside the SSH-tunnel ones without touching the
// derivation, the series store or the UI.

export type SourceKind = 'vllm' | 'llama-server' | 'sglang' | 'tei' | 'openai' | 'nvidia-smi' | 'amd-smi' | 'rocm-smi' | 'amd-sysfs' | 'prometheus-api';

export interface TelemetrySource {
  /** Stable key, e.g. `gpu-a/qwen` or `gpu-a/gpus`. */
  readonly id: string;
  readonly kind: SourceKind;
  /** Never throws: a failure is `{ ok: false, stale }` with a coded reason. */
  scrape(signal?: AbortSignal): Promise<SourceReading>;
}

/** GET a path of the service (relative to its base URL); transport failures throw coded AppErrors. */
export type HttpGet = (path: string, options?: { maxBytes?: number; signal?: AbortSignal }) => Promise<HttpText>;

/** What an SSH session's exec offers (structurally the ssh capability's `exec`). */
export type ExecRunner = (
  command: string,
  options: { timeoutMs?: number; maxOutputBytes?: number; signal?: AbortSignal },
) => Promise<{ exitCode: number | null; signal?: string | null; stdout: string; stderr: string }>;

/** An HttpGet through the service's upstream client (its tunnel). */
export function httpGetFor(client: UpstreamClient, options: HttpScrapeOptions = {}): HttpGet {
  return (path, o = {}) => fetchText(client, path, { ...options, ...o, signal: o.signal ?? options.signal });
}

export function staleReason(code: string, message: string, atMs: number): StaleReason {
  return { code, message, atMs };
}

export function staleFromError(err: unknown, atMs: number): StaleReason {
  const e = toAppError(err, TelemetryErrorCode.SCRAPE_FAILED);
  return { code: e.code, message: e.message, atMs };
}

/** `CODE: message`, the shape the fleet view shows as a stale reason. */
export function formatStaleReason(reason: StaleReason | null): string | null {
  return reason === null ? null : `${reason.code}: ${reason.message}`;
}
