// How the Reports view words things: gate counts, digests, windows, sizes, the
// advice that goes with each report error code, and which progress events
// belong to the export this page started.
import { ReportErrorCode, type ContractError, type Gate, type GateStatus, type ReportExport, type ReportProgress, type ReportVerifyResult } from '../../../../src-preload/contract/index.js';
import { formatTime, zoneLabel } from '../../format/format.js';

export type GateCounts = ReportExport['gates'];

export const GATE_ORDER: readonly GateStatus[] = ['pass', 'fail', 'pending', 'unverified'];

/** Badge tones (components/Badge.tsx) of each status; the status word is always shown with it. */
export const GATE_TONE: Readonly<Record<GateStatus, 'ok' | 'error' | 'warn' | 'neutral'>> = { pass: 'ok', fail: 'error', pending: 'warn', unverified: 'neutral' };

export function countGates(gates: readonly Gate[] | null): GateCounts {
  const counts: GateCounts = { pass: 0, fail: 0, pending: 0, unverified: 0 };
  for (const g of gates ?? []) counts[g.status] += 1;
  return counts;
}

/** "3 pass · 1 fail · 8 pending · 2 unverified" (zeros left out; "no gates" when all are). */
export function gateCountsText(c: GateCounts): string {
  const parts = GATE_ORDER.filter((s) => c[s] > 0).map((s) => `${c[s]} ${s}`);
  return parts.length ? parts.join(' · ') : 'no gates';
}

export function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

export function hostsText(hosts: readonly string[]): string {
  return hosts.length === 0 ? 'all hosts' : hosts.join(', ');
}

/** "2026-11-30 14:00:00 – 22:00:00 UTC+1": both ends in local time with the zone, the date repeated only when it changes. */
export function windowText(fromMs: number, toMs: number): string {
  const from = formatTime(fromMs, { date: 'always' });
  // Same day: the end is shown as a clock (formatTime leaves the date out when "now" is that day).
  const to = formatTime(toMs, { nowMs: fromMs });
  return zoneLabel(fromMs) === zoneLabel(toMs) ? `${from.replace(/ UTC\S*$/, '')} – ${to}` : `${from} – ${to}`;
}

/** What the operator can do about a report error, by its stable code. */
export function errorAdvice(code: string): string | null {
  switch (code) {
    case ReportErrorCode.SIGNING_KEY_ENCRYPTED:
      return 'The signing key is encrypted: enter its passphrase and export again.';
    case ReportErrorCode.SIGNING_KEY_PASSPHRASE_INCORRECT:
      return 'The passphrase does not open this key: enter it again.';
    case ReportErrorCode.SIGNING_KEY_UNREADABLE:
      return 'The key file cannot be read by the console: check the path and its permissions.';
    case ReportErrorCode.SIGNING_KEY_UNSUPPORTED:
      return 'Use an ed25519, ECDSA or RSA key in OpenSSH or PEM format.';
    case ReportErrorCode.OUTPUT_UNWRITABLE:
      return 'Choose an output folder the console can write to, or leave it empty for the default.';
    case ReportErrorCode.PDF_UNAVAILABLE:
      return 'This console has no browser to print a PDF with: untick PDF and export md, html or json.';
    case ReportErrorCode.PDF_FAILED:
      return 'Printing the PDF failed: export without PDF, or try again.';
    case ReportErrorCode.EXPORT_RUNNING:
      return 'Another export is still running: wait for it to finish.';
    case ReportErrorCode.UNKNOWN_HOST:
      return 'A chosen host is no longer in the inventory: update the host selection.';
    case ReportErrorCode.MANIFEST_INVALID:
      return 'The folder holds no readable manifest.json: is it an export folder?';
    default:
      return null;
  }
}

/**
 * The one-line verdict above the findings. The core counts a missing
 * signature as a failed finding (a stripped signature looks the same as none);
 * when that is the only failure the line says so in words instead of
 * "1 FAILED", while the findings below still show it as FAIL.
 */
export function verifyHeadline(r: ReportVerifyResult): { tone: 'ok' | 'warn' | 'error'; text: string } {
  if (r.ok) return { tone: 'ok', text: 'all OK' };
  const failed = r.findings.filter((f) => !f.ok);
  if (r.signature === 'missing' && failed.length > 0 && failed.every((f) => f.check === 'signature')) return { tone: 'warn', text: 'not signed — everything else OK' };
  return { tone: 'error', text: `${failed.length} FAILED` };
}

/** Whether the passphrase field should be offered (and focused) after this error. */
export function wantsPassphrase(code: string): boolean {
  return code === ReportErrorCode.SIGNING_KEY_ENCRYPTED || code === ReportErrorCode.SIGNING_KEY_PASSPHRASE_INCORRECT;
}

export function errorText(e: ContractError): string {
  return `${e.code}: ${e.message}`;
}

/**
 * Progress of the export this page started. The export's id is known only
 * when the call returns, so while it is in flight the first event adopts its
 * id and later events of other exports (another window) are ignored.
 */
export interface ExportProgressState {
  exportId: string | null;
  last: ReportProgress | null;
}

export const NO_PROGRESS: ExportProgressState = { exportId: null, last: null };

export function reduceProgress(state: ExportProgressState, event: ReportProgress, inFlight: boolean): ExportProgressState {
  if (state.exportId === null) {
    if (!inFlight) return state;
    return { exportId: event.exportId, last: event };
  }
  if (event.exportId !== state.exportId) return state;
  return { exportId: state.exportId, last: event };
}

export function progressPct(p: ReportProgress | null): number {
  if (!p) return 0;
  if (p.state === 'done') return 100;
  return p.total > 0 ? Math.max(0, Math.min(100, (p.done / p.total) * 100)) : 0;
}
