// How log entries read in the panel and in a downloaded file, and which rows
// of a long list are drawn (only what the viewport shows, so a fast follow
// costs the same as a slow one).
import type { LogEntry, LogFailureKind, LogMarker } from '../../../../src-preload/contract/index.js';
import { isoLocal } from '../../format/format.js';

const FAILURE_WORDS: Record<LogFailureKind, string> = {
  'cuda-oom': 'CUDA OOM',
  'kv-cache': 'KV cache',
  'nccl-error': 'NCCL',
  xid: 'Xid',
  'engine-dead': 'engine dead',
  'model-load-failed': 'load failed',
  'request-error': 'request error',
  'port-in-use': 'port in use',
  'download-failed': 'download',
  'disk-full': 'disk full',
  'context-length': 'context length',
  traceback: 'traceback',
};

export function failureWords(kind: LogFailureKind): string {
  return FAILURE_WORDS[kind];
}

const MARKER_GLYPH: Record<LogMarker['marker'], string> = {
  dropped: '⚠',
  gap: '⚠',
  'link-lost': '⨯',
  resumed: '↻',
  'source-ended': '■',
  'file-rotated': '↺',
  'file-truncated': '✂',
  'file-missing': '?',
  'stream-lost': '⚠',
};

/** A marker as one row: what happened, the count where there is one, the code where it reports a loss. */
export function markerWords(m: LogMarker): string {
  return `${MARKER_GLYPH[m.marker]} ${m.text}${m.code ? ` (${m.code})` : ''}`;
}

/** One entry as a line of the downloaded file: the source's time (local, ISO) when it has one, never the arrival time. */
export function entryLine(e: LogEntry): string {
  if (e.type === 'marker') return `-- ${markerWords(e)} --`;
  return e.ts === null ? e.text : `${isoLocal(e.ts)} ${e.text}`;
}

export function downloadText(entries: readonly LogEntry[]): string {
  return entries.length === 0 ? '' : `${entries.map(entryLine).join('\n')}\n`;
}

/** A file name for the download: host, service and the time it was taken, with nothing a file system minds. */
export function downloadName(label: string, serviceId: string, atMs: number): string {
  const stamp = isoLocal(atMs).replace(/[:]/g, '').replace(/\+.*|-\d{4}$/, '');
  return `${label}-${serviceId}-${stamp}.log`.replace(/[^A-Za-z0-9._-]/g, '_');
}

/** The rows to draw for a list of `total` rows of `rowPx` scrolled to `scrollTop` in a viewport `heightPx` tall. */
export function visibleRows(scrollTop: number, heightPx: number, rowPx: number, total: number, overscan = 10): { first: number; last: number } {
  if (total === 0) return { first: 0, last: -1 };
  const first = Math.max(0, Math.floor(scrollTop / rowPx) - overscan);
  const last = Math.min(total - 1, Math.ceil((scrollTop + Math.max(heightPx, rowPx)) / rowPx) + overscan);
  return { first, last: Math.max(first - 1, last) };
}
