// Whether the console can write to its data folder, told once for every writer.
// A writer whose write fails on a full disk or an I/O error reports it here and
// keeps running (the request log and telemetry drop and count; the audit log
// refuses, so what must be audited is refused too). While writes fail, a probe
// measures the folder's free space and, once there is room, writes the
// recovery audit event; when that lands, every writer is cleared at once and
// `onDidRecover` lets the ones holding rows write them.
import { statfsSync } from 'node:fs';
import { describeStorage, type StorageHealth as StorageHealthView, type StorageWriter, type StorageWriterFailure } from '../../../src-preload/contract/index.js';
import { AppError, Emitter, type Clock, type Disposable, type Logger } from '../base/index.js';
import { classifyStorageFault, storageErrorCode, wrapSqliteError } from './errors.js';

export type { StorageWriter };

/** What a writer holds and has given up since its writes began to fail; null where it does neither by design. */
export interface StorageWriterCounts {
  dropped: number | null;
  pending: number | null;
}

/** One episode, as the recovery audit event records it. */
export interface StorageEpisode {
  folder: string;
  since: number;
  state: 'full' | 'io-error';
  codes: string[];
  freeBytes: number | null;
  dropped: Partial<Record<StorageWriter, number>>;
}

export interface StorageHealthOptions {
  folder: string;
  clock: Clock;
  logger: Logger;
  /**
   * Writes the recovery audit event (the proof that the store takes writes again); throws when it cannot.
   * Absent (':memory:' stores): a writer's own next success clears it.
   */
  probe?: (episode: StorageEpisode) => void;
  /** How often the probe runs while writes fail. Default 2 s. */
  probeIntervalMs?: number;
  /**
   * A full disk counts as having room again only with this much free: a few KiB freed by a log rotation
   * would let one batch land and the next fail, and the banner would flap. Default 1 MiB.
   */
  recoverFreeBytes?: number;
  /** The folder's free bytes for this user; null when unknown. Default: statfs. */
  freeBytes?: (folder: string) => number | null;
}

interface Failure {
  since: number;
  code: string | null;
  fault: 'full' | 'io';
}

export class StorageHealthTracker implements Disposable {
  private readonly failures = new Map<StorageWriter, Failure>();
  private readonly counters = new Map<StorageWriter, () => StorageWriterCounts>();
  /** Every writer that failed in this episode (one may land again before the others) and the codes seen. */
  private readonly episodeWriters = new Set<StorageWriter>();
  private readonly episodeCodes = new Set<string>();
  /** Each writer's dropped count when the last episode ended: an episode records only its own drops. */
  private readonly droppedBefore = new Map<StorageWriter, number>();
  private readonly changed = new Emitter<StorageHealthView>();
  private readonly recovered = new Emitter<void>();
  private since: number | null = null;
  private recoveredAt: number | null = null;
  private free: { bytes: number | null; at: number };
  private probeTimer: Disposable | null = null;
  /** While the recovery event is written: its own landed write must not end (and record) the episode a second time. */
  private recording = false;
  private disposed = false;

  /** The view changed: a writer failed or came back, or the free space moved while failing. */
  readonly onDidChange = this.changed.on.bind(this.changed);
  /** Writes land again: writers holding rows should write them now. */
  readonly onDidRecover = this.recovered.on.bind(this.recovered);

  constructor(private readonly options: StorageHealthOptions) {
    this.free = { bytes: null, at: options.clock.now() };
  }

  get folder(): string {
    return this.options.folder;
  }

  get healthy(): boolean {
    return this.failures.size === 0;
  }

  /** Registers what `writer` holds and drops, read whenever the view is built. */
  track(writer: StorageWriter, counts: () => StorageWriterCounts): Disposable {
    this.counters.set(writer, counts);
    return { dispose: () => void (this.counters.get(writer) === counts && this.counters.delete(writer)) };
  }

  /**
   * A write of `writer` failed. A full disk or an I/O error is recorded (the view says which folder and
   * since when); any other failure is not the disk's and changes nothing here. Returns the error to
   * throw or log: coded STORE_DISK_FULL / STORE_IO_ERROR, naming the folder and its free space.
   */
  failed(writer: StorageWriter, err: unknown, what: string): AppError {
    const fault = classifyStorageFault(err);
    if (fault !== 'full' && fault !== 'io') return wrapSqliteError(err, what);
    const freeBytes = this.measure();
    const wrapped = this.withFolder(err, what, freeBytes);
    const code = storageErrorCode(err);
    this.episodeWriters.add(writer);
    if (code !== null) this.episodeCodes.add(code);
    const known = this.failures.get(writer);
    if (known === undefined || known.code !== code || known.fault !== fault) {
      const now = this.options.clock.now();
      const first = this.since === null;
      this.since ??= now;
      this.failures.set(writer, { since: known?.since ?? now, code, fault });
      if (first) this.options.logger.warn('writes to the data folder fail', { folder: this.options.folder, writer, code, freeBytes });
      this.startProbe();
      this.changed.fire(this.view());
    }
    return wrapped;
  }

  /** A write of `writer` landed: that writer is no longer failing (the others keep their state until theirs land or the probe does). */
  wrote(writer: StorageWriter): void {
    if (this.recording || this.failures.size === 0 || !this.failures.has(writer)) return;
    if (this.failures.size > 1) {
      this.failures.delete(writer);
      this.changed.fire(this.view());
      return;
    }
    const episode = this.episode();
    this.endEpisode(episode);
    // Recorded like the probe's: should this write fail, the audit log's report opens a new episode.
    try {
      this.record(episode);
    } catch (err) {
      this.options.logger.debug('storage recovery event not written', { error: (err as Error).message });
    }
  }

  view(): StorageHealthView {
    const failing: StorageWriterFailure[] = [...this.failures].map(([writer, f]) => {
      const counts = this.counters.get(writer)?.() ?? { dropped: null, pending: null };
      return { writer, failingSince: f.since, code: f.code, dropped: counts.dropped, pending: counts.pending };
    });
    const full = [...this.failures.values()].some((f) => f.fault === 'full');
    return {
      state: this.failures.size === 0 ? 'ok' : full ? 'full' : 'io-error',
      folder: this.options.folder,
      freeBytes: this.free.bytes,
      checkedAt: this.free.at,
      since: this.since,
      failing,
      recoveredAt: this.recoveredAt,
    };
  }

  /** The view with the free space measured now (a status read, a /metrics scrape): a statfs call, no write. */
  current(): StorageHealthView {
    this.measure();
    return this.view();
  }

  /** The coded error naming the folder; one already coded elsewhere without the folder (settings) gets it added. */
  private withFolder(err: unknown, what: string, freeBytes: number | null): AppError {
    if (!(err instanceof AppError)) return wrapSqliteError(err, what, { folder: this.options.folder, freeBytes });
    if (typeof err.details['folder'] === 'string') return err;
    return new AppError(err.code, `${err.message} (data folder ${this.options.folder})`, {
      retryable: err.retryable,
      details: { ...err.details, folder: this.options.folder, freeBytes },
      cause: err.cause ?? err,
    });
  }

  /** One line for logs and the CLI: which folder, what is wrong, what is being dropped. */
  describe(): string {
    return describeStorage(this.view());
  }

  dispose(): void {
    this.disposed = true;
    this.stopProbe();
    this.changed.dispose();
    this.recovered.dispose();
  }

  private measure(): number | null {
    const bytes = (this.options.freeBytes ?? statfsFree)(this.options.folder);
    this.free = { bytes, at: this.options.clock.now() };
    return bytes;
  }

  private startProbe(): void {
    if (this.probeTimer !== null || this.disposed) return;
    this.probeTimer = this.options.clock.setInterval(() => this.runProbe(), this.options.probeIntervalMs ?? 2_000);
  }

  private stopProbe(): void {
    void this.probeTimer?.dispose();
    this.probeTimer = null;
  }

  private runProbe(): void {
    if (this.failures.size === 0) return this.stopProbe();
    const freeBytes = this.measure();
    const full = [...this.failures.values()].some((f) => f.fault === 'full');
    const room = !full || freeBytes === null || freeBytes >= (this.options.recoverFreeBytes ?? 1_048_576);
    if (!room || !this.options.probe) {
      // Pushed every probe while failing: the dropped and waiting counts move even when the free space does not.
      this.changed.fire(this.view());
      return;
    }
    const episode = this.episode();
    try {
      this.record(episode);
    } catch (err) {
      // Still failing: the probe's own failure was reported by the audit log (writer 'audit').
      this.options.logger.debug('storage probe failed', { error: (err as Error).message });
      this.changed.fire(this.view());
      return;
    }
    this.endEpisode(episode);
  }

  private record(episode: StorageEpisode): void {
    this.recording = true;
    try {
      this.options.probe?.(episode);
    } finally {
      this.recording = false;
    }
  }

  private episode(): StorageEpisode {
    const view = this.view();
    const dropped: Partial<Record<StorageWriter, number>> = {};
    for (const writer of this.episodeWriters) {
      const now = this.counters.get(writer)?.().dropped ?? null;
      if (now !== null) dropped[writer] = now - (this.droppedBefore.get(writer) ?? 0);
    }
    return { folder: view.folder, since: this.since ?? view.checkedAt, state: view.state === 'io-error' ? 'io-error' : 'full', codes: [...this.episodeCodes], freeBytes: view.freeBytes, dropped };
  }

  private endEpisode(episode: StorageEpisode): void {
    for (const writer of this.episodeWriters) {
      const dropped = this.counters.get(writer)?.().dropped ?? null;
      if (dropped !== null) this.droppedBefore.set(writer, dropped);
    }
    this.episodeWriters.clear();
    this.episodeCodes.clear();
    this.failures.clear();
    this.since = null;
    this.recoveredAt = this.options.clock.now();
    this.stopProbe();
    this.options.logger.info('writes to the data folder land again', { folder: this.options.folder, since: episode.since, dropped: episode.dropped });
    this.changed.fire(this.view());
    this.recovered.fire();
  }
}

function statfsFree(folder: string): number | null {
  try {
    const s = statfsSync(folder);
    return Number(s.bavail) * Number(s.bsize);
  } catch {
    return null;
  }
}
