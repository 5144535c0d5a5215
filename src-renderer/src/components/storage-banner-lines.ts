// What the storage banner says, from the core's storage health: which folder,
// what is wrong, since when, and what each writer drops, holds or refuses.
// Pure, so it is tested without a page. Unknown free space is said, never 0.
import { formatStorageBytes, type StorageHealth, type StorageWriter } from '../../../src-preload/contract/index.js';
import { formatTime } from '../format/format.js';

export interface StorageBannerText {
  title: string;
  folder: string;
  /** "12 KiB free · since 14:03:07 UTC+1" */
  detail: string;
  /** One line per failing writer. */
  lines: string[];
  /** What keeps running and what the operator does. */
  advice: string;
}

const WRITER_NAMES: Record<StorageWriter, string> = {
  requests: 'Request log',
  telemetry: 'Telemetry history',
  captures: 'Captured requests',
  audit: 'Audit log',
};

/** "12 KiB free"; unknown is said, never 0. */
export function formatFreeBytes(bytes: number | null): string {
  return bytes === null ? 'free space unknown' : `${formatStorageBytes(bytes)} free`;
}

/** null while writes land: the banner is not shown. */
export function storageBannerText(view: StorageHealth, nowMs: number): StorageBannerText | null {
  if (view.state === 'ok') return null;
  const lines = view.failing.map((f) => {
    const name = WRITER_NAMES[f.writer];
    if (f.writer === 'audit') return `${name}: cannot be written — approvals, proposals and other audited changes are refused until space returns${f.code ? ` (${f.code})` : ''}`;
    const held = f.pending === null ? '' : `, ${f.pending.toLocaleString()} waiting to be written`;
    const dropped = f.dropped === null ? '' : `${f.dropped.toLocaleString()} dropped since start`;
    return `${name}: ${dropped}${held}${f.code ? ` (${f.code})` : ''}`;
  });
  const since = view.since === null ? '' : ` · since ${formatTime(view.since, { nowMs })}`;
  return {
    title: view.state === 'full' ? 'Data folder full' : 'Data folder refuses writes (I/O error)',
    folder: view.folder,
    detail: `${formatFreeBytes(view.freeBytes)}${since}`,
    lines,
    advice:
      view.state === 'full'
        ? 'The proxy keeps serving and telemetry stays live. Free space in this folder: writes resume by themselves.'
        : 'The proxy keeps serving and telemetry stays live. Check the disk (dmesg, SMART); writes resume once it takes them.',
  };
}
