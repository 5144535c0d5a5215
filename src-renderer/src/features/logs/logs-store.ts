// One logs panel's state and its calls (the Logs view and the host view each
// make their own): which service, the last N / since / filter asked, a
// bounded list of what came (lines and markers, oldest dropped past the bound
// and counted), and a live follow that renews its lease every leaseMs/2 and
// is unfollowed when the panel goes (dispose). Vanilla zustand, so it runs in
// Node tests; components read it with narrow selectors.
import { createStore, type StoreApi } from 'zustand/vanilla';
import { LogsErrorCode, sequenceBatch, streamLostMarker, type ContractError, type LogEntry, type LogFilter, type LogSourceView, type LogsBatch, type LogsEnded } from '../../../../src-preload/contract/index.js';
import { toContractError, type Transport } from '../../transport/transport.js';

/** Entries a panel keeps; older ones are dropped and counted (`evicted`). */
export const MAX_LOG_ENTRIES = 5000;
/** Batches held for a follow id not known yet (events can beat the follow call's answer). */
const EARLY_BATCHES = 64;

export interface LogsTarget {
  label: string;
  serviceId: string;
}

export interface LogsFilterInput {
  text: string;
  regex: boolean;
}

export type LogsStatus = 'idle' | 'loading' | 'ready' | 'following' | 'ended' | 'error';

export interface LogsState {
  target: LogsTarget | null;
  /** The last N asked (a tail's N, a follow's backlog, at most 1000 there). */
  lines: number;
  /** Minutes back for `since`; null: no since. */
  sinceMinutes: number | null;
  filter: LogsFilterInput;
  entries: readonly LogEntry[];
  /** Entries dropped from the front of the list past MAX_LOG_ENTRIES since the last load. */
  evicted: number;
  source: LogSourceView | null;
  status: LogsStatus;
  /** The channel's coded error (LOGS_SOURCE_MISSING, LOGS_NOT_PERMITTED, SSH_NOT_CONNECTED…), or why a follow ended. */
  error: ContractError | null;
  /** LOGS_FILTER_INVALID, shown by the filter field. */
  filterError: ContractError | null;
  /** Whether the operator wants a live follow. */
  follow: boolean;
  followId: string | null;
  /** Entries still queued in main for this follow after the last batch. */
  behind: number;
  /** Lines that reached this panel since the last load (shown, or later dropped from the bounded list). */
  received: number;
  /** Lines lost to this panel and counted since the last load: main's "dropped" markers, and the "stream-lost" ones this store adds where batches never arrived. */
  droppedCounted: number;
  setTarget(target: LogsTarget | null): void;
  setLines(lines: number): void;
  setSince(minutes: number | null): void;
  setFilter(filter: LogsFilterInput): void;
  setFollow(on: boolean): void;
  /** Asks again with the current settings (a tail, or a new follow). */
  load(): Promise<void>;
  /**
   * The target host's connection state as the fleet shows it. A panel whose
   * tail or follow failed while the host was away asks again once the host is
   * connected again (a follow that is running resumes by itself in main).
   */
  hostStateChanged(state: string): void;
  /** Ends the follow (unfollow), its renewals and event listeners; the panel is gone. */
  dispose(): void;
}

export interface LogsStoreOptions {
  transport: Transport;
  now?: () => number;
  setInterval?: (fn: () => void, ms: number) => unknown;
  clearInterval?: (handle: unknown) => void;
  lines?: number;
}

export type LogsStore = StoreApi<LogsState>;

export function filterOf(f: LogsFilterInput): LogFilter | undefined {
  return f.text.trim() === '' ? undefined : { pattern: f.text, regex: f.regex, ignoreCase: true };
}

/** `list` with `more` appended, bounded to the last MAX_LOG_ENTRIES; how many fell off the front. */
export function appendBounded(list: readonly LogEntry[], more: readonly LogEntry[], max = MAX_LOG_ENTRIES): { entries: readonly LogEntry[]; dropped: number } {
  if (more.length === 0) return { entries: list, dropped: 0 };
  const all = list.length + more.length;
  if (all <= max) return { entries: list.concat(more), dropped: 0 };
  const dropped = all - max;
  return { entries: dropped >= list.length ? more.slice(dropped - list.length) : list.slice(dropped).concat(more), dropped };
}

/** Lines among `entries`, and the lines their "dropped" and "stream-lost" markers count. */
export function countLines(entries: readonly LogEntry[]): { lines: number; dropped: number } {
  let lines = 0;
  let dropped = 0;
  for (const e of entries) {
    if (e.type === 'line') lines++;
    else if (e.marker === 'dropped' || e.marker === 'stream-lost') dropped += e.count ?? 0;
  }
  return { lines, dropped };
}

export function createLogsStore(options: LogsStoreOptions): LogsStore {
  const { transport } = options;
  const now = options.now ?? (() => Date.now());
  const every = options.setInterval ?? ((fn: () => void, ms: number) => globalThis.setInterval(fn, ms));
  const stopEvery = options.clearInterval ?? ((h: unknown) => globalThis.clearInterval(h as ReturnType<typeof setInterval>));
  let generation = 0;
  let renewTimer: unknown = null;
  let disposed = false;
  /** The current follow's next entry index: a batch past it says what the event stream skipped. */
  let expectedIndex = 0;
  /** The last host state seen by hostStateChanged; a change into `connected` may retry. */
  let hostState: string | null = null;
  const early = new Map<string, LogsBatch[]>();

  const store = createStore<LogsState>()((set, get) => {
    const stopRenew = () => {
      if (renewTimer !== null) stopEvery(renewTimer);
      renewTimer = null;
    };
    /** Unfollows the current follow (if any) and forgets it; the panel's list stays. */
    const dropFollow = () => {
      stopRenew();
      const id = get().followId;
      if (id !== null) {
        set({ followId: null });
        transport.invoke('logs.unfollow', { followId: id }).catch(() => undefined);
      }
    };
    const fail = (err: unknown, gen: number) => {
      if (gen !== generation) return;
      const e = toContractError(err);
      if (e.code === LogsErrorCode.FILTER_INVALID) set({ status: 'error', filterError: e, error: null });
      else set({ status: 'error', error: e, filterError: null });
    };
    const renew = async (id: string) => {
      try {
        const r = await transport.invoke('logs.renew', { followIds: [id] });
        if (r.unknown.includes(id) && get().followId === id) {
          stopRenew();
          set({ followId: null, status: 'ended', error: { code: LogsErrorCode.FOLLOW_UNKNOWN, message: 'the follow ended in the console (its lease ran out or the console restarted); turn Follow on again', retryable: true, details: {} } });
        }
      } catch {
        // The link is down: the next renewal tries again; the lease outlives one miss.
      }
    };
    const tail = async (t: LogsTarget, gen: number) => {
      const s = get();
      const sinceMs = s.sinceMinutes === null ? undefined : now() - s.sinceMinutes * 60_000;
      try {
        const r = await transport.invoke('logs.tail', { ...t, lines: s.lines, ...(sinceMs !== undefined ? { sinceMs } : {}), ...(filterOf(s.filter) ? { filter: filterOf(s.filter) } : {}) });
        if (gen !== generation) return;
        set({ entries: appendBounded([], r.entries).entries, evicted: 0, received: countLines(r.entries).lines, source: r.source, status: 'ready', error: null, filterError: null });
      } catch (err) {
        fail(err, gen);
      }
    };
    const startFollow = async (t: LogsTarget, gen: number) => {
      const s = get();
      const sinceMs = s.sinceMinutes === null ? undefined : now() - s.sinceMinutes * 60_000;
      try {
        const r = await transport.invoke('logs.follow', { ...t, lines: Math.min(1000, s.lines), ...(sinceMs !== undefined ? { sinceMs } : {}), ...(filterOf(s.filter) ? { filter: filterOf(s.filter) } : {}) });
        if (gen !== generation || disposed) {
          transport.invoke('logs.unfollow', { followId: r.followId }).catch(() => undefined);
          return;
        }
        set({ followId: r.followId, source: r.source, status: 'following', error: null, filterError: null });
        renewTimer = every(() => void renew(r.followId), Math.max(1000, Math.floor(r.leaseMs / 2)));
        for (const b of early.get(r.followId) ?? []) onBatch(b);
        early.clear();
      } catch (err) {
        fail(err, gen);
      }
    };
    return {
      target: null,
      lines: options.lines ?? 200,
      sinceMinutes: null,
      filter: { text: '', regex: false },
      entries: [],
      evicted: 0,
      source: null,
      status: 'idle',
      error: null,
      filterError: null,
      follow: false,
      followId: null,
      behind: 0,
      received: 0,
      droppedCounted: 0,
      setTarget: (target) => {
        set({ target });
        void get().load();
      },
      setLines: (lines) => set({ lines }),
      setSince: (sinceMinutes) => set({ sinceMinutes }),
      setFilter: (filter) => set({ filter }),
      setFollow: (on) => {
        set({ follow: on });
        void get().load();
      },
      load: async () => {
        const gen = ++generation;
        dropFollow();
        early.clear();
        expectedIndex = 0;
        const t = get().target;
        if (t === null || disposed) {
          set({ status: 'idle', entries: [], evicted: 0, error: null, filterError: null });
          return;
        }
        set({ status: 'loading', entries: [], evicted: 0, behind: 0, received: 0, droppedCounted: 0, error: null, filterError: null });
        await (get().follow ? startFollow(t, gen) : tail(t, gen));
      },
      hostStateChanged: (state) => {
        const was = hostState;
        hostState = state;
        const s = get();
        // Only a failure of the link is worth asking again for: a filter error or a source that is
        // missing or not permitted fails the same way on a reconnected host.
        if (state === 'connected' && was !== null && was !== 'connected' && s.status === 'error' && s.error !== null && (s.error.retryable || s.error.code.startsWith('SSH_'))) void get().load();
      },
      dispose: () => {
        disposed = true;
        generation++;
        dropFollow();
        offBatch();
        offEnded();
      },
    };
  });

  function onBatch(b: LogsBatch): void {
    const id = store.getState().followId;
    if (id === null) {
      // Possibly ours, before the follow call answered.
      if (store.getState().status === 'loading' && early.size < EARLY_BATCHES) early.set(b.followId, [...(early.get(b.followId) ?? []), b]);
      return;
    }
    if (b.followId !== id) return;
    const seq = sequenceBatch(expectedIndex, b);
    expectedIndex = seq.nextIndex;
    append(seq.lost > 0 ? [lostMarker(seq.lost), ...seq.fresh] : seq.fresh, b.queued);
  }
  function lostMarker(count: number): LogEntry {
    return streamLostMarker(count, now(), 'the event stream');
  }
  function append(entries: readonly LogEntry[], behind: number): void {
    store.setState((s) => {
      const next = appendBounded(s.entries, entries);
      const n = countLines(entries);
      return { entries: next.entries, evicted: s.evicted + next.dropped, behind, received: s.received + n.lines, droppedCounted: s.droppedCounted + n.dropped };
    });
  }
  function onEnded(e: LogsEnded): void {
    const s = store.getState();
    if (s.followId !== e.followId) return;
    if (renewTimer !== null) stopEvery(renewTimer);
    renewTimer = null;
    // The last batches can be skipped too; the end says how many entries there were.
    if (e.endIndex > expectedIndex) append([lostMarker(e.endIndex - expectedIndex)], 0);
    expectedIndex = e.endIndex;
    store.setState({ followId: null, status: e.error ? 'error' : 'ended', error: e.error });
  }
  const offBatch = transport.on('logs.batch', onBatch);
  const offEnded = transport.on('logs.ended', onEnded);
  return store;
}
