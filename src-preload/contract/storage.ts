import { z } from 'zod';

// The data folder's health: whether the console can write its records (the
// request log, telemetry history, the audit log), which folder it is, what it
// has left, since when writes fail and what is being dropped meanwhile. Pushed
// on change (`storage.health`) and read once at start (`storage.status`).

/** What writes to the data folder: rows dropped (requests, telemetry) or changes refused (audit and what must be audited). */
export const StorageWriterSchema = z.enum(['requests', 'telemetry', 'audit', 'captures']);
export type StorageWriter = z.infer<typeof StorageWriterSchema>;

export const StorageWriterFailureSchema = z
  .object({
    writer: StorageWriterSchema,
    /** When this writer's first write failed (ms epoch). */
    failingSince: z.number(),
    /** SQLite's extended code or the errno name (SQLITE_FULL, SQLITE_IOERR_WRITE, ENOSPC); null when none was given. */
    code: z.string().nullable(),
    /** Records given up for good since the console started; null for a writer that refuses instead of dropping (audit). */
    dropped: z.number().int().nonnegative().nullable(),
    /** Records held in memory, written when space returns; null when it holds none by design. */
    pending: z.number().int().nonnegative().nullable(),
  })
  .strict();
export type StorageWriterFailure = z.infer<typeof StorageWriterFailureSchema>;

export const StorageHealthSchema = z
  .object({
    /** ok: writes land; full: the filesystem has no space (or quota) left; io-error: the disk refuses writes. */
    state: z.enum(['ok', 'full', 'io-error']),
    /** The data folder (where gpu-console.db lives). */
    folder: z.string(),
    /** What its filesystem has left for this user, in bytes, when last measured; null when it could not be measured. */
    freeBytes: z.number().nonnegative().nullable(),
    /** When freeBytes was measured. */
    checkedAt: z.number(),
    /** When the first write of this episode failed; null while state is ok. */
    since: z.number().nullable(),
    /** The writers failing now (empty while ok). */
    failing: z.array(StorageWriterFailureSchema),
    /** The last episode's end (writes came back), or null if writes never failed since start. */
    recoveredAt: z.number().nullable(),
  })
  .strict();
export type StorageHealth = z.infer<typeof StorageHealthSchema>;

export const storageInvokeChannels = {
  'storage.status': { input: z.object({}).strict(), output: StorageHealthSchema },
} as const;

export const storageEventChannels = {
  /** The data folder's health changed (a write failed, space came back, free bytes moved while failing). */
  'storage.health': StorageHealthSchema,
} as const;

/** 0 B, 512 KiB, 3.2 MiB, 1.5 GiB (binary units, as `df -h` shows them): one format for the UI, the CLI and error messages. */
export function formatStorageBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = bytes / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v >= 10 ? Math.round(v) : Math.round(v * 10) / 10} ${units[i]}`;
}

const WRITER_WORDS: Record<StorageWriter, string> = {
  requests: 'request-log rows',
  telemetry: 'telemetry history',
  captures: 'captured request bodies',
  audit: 'audited changes (approvals, proposals, token and setting changes) are refused',
};

/** One line for logs and `gpu-console status`: "data folder /x is full (0 B free) since …; dropping request-log rows (120 dropped, 5 waiting); …" */
export function describeStorage(view: StorageHealth): string {
  const free = view.freeBytes === null ? '' : ` (${formatStorageBytes(view.freeBytes)} free)`;
  if (view.state === 'ok') return `data folder ${view.folder}: writes land${free}`;
  const what = view.state === 'full' ? 'is full' : 'refuses writes (I/O error)';
  const since = view.since === null ? '' : ` since ${new Date(view.since).toISOString()}`;
  const parts = view.failing.map((f) => {
    if (f.dropped === null) return WRITER_WORDS[f.writer];
    const held = f.pending ? `, ${f.pending} waiting` : '';
    return `dropping ${WRITER_WORDS[f.writer]} (${f.dropped} dropped${held})`;
  });
  return `data folder ${view.folder} ${what}${free}${since}; ${parts.join('; ')}`;
}
