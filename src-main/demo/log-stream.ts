// Runs a log command on a demo host: its backlog at once, then (following)
// each entry as the service writes it, until the caller stops it (the SSH
// channel's EOF or close). The reader keeps its place by sequence number and
// writes only while the sink takes more (an SSH channel's window), so a
// chatty service slows the reader, as a pipe slows journalctl, instead of
// piling up in memory; entries the log's ring dropped meanwhile are gone, as
// a rotated journal's are. Also recognises the console's kill-on-close
// wrapper (the demo's own copy, pinned by the vocabulary test).
import { parseLogCommand, selectEntries, STILL_RUNNING, wanted, type LogFormat, type LogQuery, type LogService, type ToolAnswer } from './log-commands.js';
import type { LogEntryRecord } from './service-log.js';

/** `sh -c '<this>' gc-stream '<command>'`: runs the command, kills its process group when stdin reaches EOF. */
export const STREAM_WRAPPER =
  'exec 3<&0; if command -v setsid >/dev/null 2>&1; then setsid sh -c "$1" </dev/null & else sh -c "$1" </dev/null & fi; p=$!; ' +
  '{ trap "exit 0" TERM; while read -r _; do :; done; kill -TERM -"$p" 2>/dev/null || kill -TERM "$p" 2>/dev/null; } <&3 3<&- & w=$!; ' +
  'exec 3<&-; wait "$p"; s=$?; kill "$w" 2>/dev/null; exit "$s"';

/** The command inside the wrapper, or null when `argv` is not the wrapper. */
export function unwrapStream(argv: readonly string[]): string | null {
  return argv.length === 5 && argv[0] === 'sh' && argv[1] === '-c' && argv[2] === STREAM_WRAPPER && argv[3] === 'gc-stream' ? argv[4]! : null;
}

export interface LogHost {
  hostname: string;
  services: readonly LogService[];
}

/** Where a running log command writes; `write` returns false while the reader should wait for `onDrain`. */
export interface LogSink {
  write(stream: 'stdout' | 'stderr', text: string): boolean;
  onDrain(fn: () => void): void;
  end(code: number): void;
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

function isoUs(tsUs: number): { date: string; us: string } {
  const d = new Date(Math.floor(tsUs / 1000));
  const date = `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
  return { date, us: pad(tsUs % 1_000_000, 6) };
}

/** journald's cursor: the entry's sequence number is its `i=`; the rest is a fixed seqnum id, boot id and the times. */
function cursorOf(e: LogEntryRecord, bootId: string): string {
  return `s=6f1b2c3d4e5f40718293a4b5c6d7e8f9;i=${e.seq.toString(16)};b=${bootId};m=${(e.tsUs % 1e12).toString(16)};t=${e.tsUs.toString(16)};x=${((e.seq * 2654435761) >>> 0).toString(16)}`;
}

function bootIdOf(host: LogHost): string {
  let h = 0;
  for (const c of host.hostname) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  return (h.toString(16) + '7e57b007c0ffee00d15ea5e000000000').slice(0, 32);
}

/** One entry as the tool prints it (a whole line with its newline). */
export function renderEntry(host: LogHost, service: LogService, format: LogFormat, e: LogEntryRecord): string {
  switch (format.kind) {
    case 'plain':
      return `${e.text}\n`;
    case 'docker': {
      const t = isoUs(e.tsUs);
      return `${format.prefix ?? ''}${format.timestamps ? `${t.date}.${t.us}${pad(e.seq % 1000, 3)}Z ` : ''}${e.text}\n`;
    }
    case 'short-iso-precise': {
      const t = isoUs(e.tsUs);
      const ident = e.writer === 'systemd' ? 'systemd' : service.identifier;
      return `${t.date}.${t.us}+00:00 ${host.hostname} ${ident}[${e.pid}]: ${e.text}\n`;
    }
    case 'json':
      return `${JSON.stringify(journalFields(host, service, format.fields, e))}\n`;
  }
}

function journalFields(host: LogHost, service: LogService, fields: readonly string[] | null, e: LogEntryRecord): Record<string, string> {
  const bootId = bootIdOf(host);
  const all: Record<string, string> = {
    MESSAGE: e.text,
    PRIORITY: String(e.priority),
    _PID: String(e.pid),
    SYSLOG_IDENTIFIER: e.writer === 'systemd' ? 'systemd' : service.identifier,
    _SYSTEMD_UNIT: e.writer === 'systemd' ? 'init.scope' : (service.places.unit ?? ''),
    _HOSTNAME: host.hostname,
    _TRANSPORT: e.writer === 'systemd' ? 'journal' : 'stdout',
  };
  const out: Record<string, string> = { __CURSOR: cursorOf(e, bootId), __REALTIME_TIMESTAMP: String(e.tsUs), __MONOTONIC_TIMESTAMP: String(e.tsUs % 1e12), _BOOT_ID: bootId };
  for (const [k, v] of Object.entries(all)) if (fields === null || fields.includes(k)) out[k] = v;
  return out;
}

/** A log command's whole answer when it does not follow (runCommand's path); null when it is no log command. */
export function answerLogCommand(argv: readonly string[], host: LogHost): ToolAnswer | null {
  const parsed = parseLogCommand(argv, host.services);
  if (!parsed) return null;
  if ('answer' in parsed) return parsed.answer.code === STILL_RUNNING ? { ...parsed.answer, code: 1 } : parsed.answer;
  const q = parsed.query;
  if (q.follow) return { stdout: '', stderr: `demo host: ${argv[0]} --follow needs a streaming channel\n`, code: 1 };
  let stdout = '';
  let stderr = '';
  for (const e of selectEntries(q)) {
    const text = renderEntry(host, q.service, q.format, e);
    if (q.format.kind === 'docker' && e.stream === 'stderr') stderr += text;
    else stdout += text;
  }
  return { stdout, stderr, code: 0 };
}

export interface RunningLog {
  stop(): void;
}

/** Starts a log command (wrapped or not) on `sink`; null when it is no log command. */
export function streamLogCommand(argv: readonly string[], host: LogHost, sink: LogSink, tokenize: (s: string) => string[]): RunningLog | null {
  const inner = unwrapStream(argv);
  const parsed = parseLogCommand(inner !== null ? tokenize(inner) : argv, host.services);
  if (!parsed) return null;
  if ('answer' in parsed) {
    const a = parsed.answer;
    if (a.stdout) sink.write('stdout', a.stdout);
    if (a.stderr) sink.write('stderr', a.stderr);
    if (a.code !== STILL_RUNNING) sink.end(a.code);
    return { stop: () => sink.end(0) };
  }
  return new LogReader(host, parsed.query, sink);
}

/** A following (or one-shot) reader over one service's log. */
class LogReader implements RunningLog {
  private nextSeq: number;
  /** The last entry a one-shot answer prints (a follow: none). */
  private readonly untilSeq: number;
  private stopped = false;
  private scheduled = false;
  private waiting = false;
  private readonly unsubscribe: { dispose(): void } | null;

  constructor(
    private readonly host: LogHost,
    private readonly q: LogQuery,
    private readonly sink: LogSink,
  ) {
    const backlog = selectEntries(q);
    // Reading starts at the backlog's first entry (or after the newest one when the backlog is empty).
    this.nextSeq = backlog[0]?.seq ?? this.lastSeq() + 1;
    this.untilSeq = q.follow ? Infinity : (backlog[backlog.length - 1]?.seq ?? 0);
    sink.onDrain(() => {
      this.waiting = false;
      this.schedule();
    });
    this.unsubscribe = q.follow ? q.service.log.onDidAppend.on(() => this.schedule()) : null;
    this.pump();
  }

  stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    this.unsubscribe?.dispose();
    this.sink.end(0);
  }

  private lastSeq(): number {
    const all = this.q.service.log.entries();
    return all.length > 0 ? all[all.length - 1]!.seq : 0;
  }

  private schedule(): void {
    if (this.scheduled || this.stopped || this.waiting) return;
    this.scheduled = true;
    queueMicrotask(() => {
      this.scheduled = false;
      this.pump();
    });
  }

  /** Writes entries from nextSeq up to untilSeq while the sink takes them; a one-shot answer then ends. */
  private pump(): void {
    if (this.stopped) return;
    const all = this.q.service.log.entries();
    const first = all[0]?.seq ?? 1;
    let i = Math.max(0, this.nextSeq - first);
    // One buffer at a time, flushed when the stream changes: stdout and stderr lines keep their order on the channel.
    let buf = '';
    let fd: 'stdout' | 'stderr' = 'stdout';
    const flush = (): boolean => {
      const ok = buf === '' || this.sink.write(fd, buf);
      buf = '';
      return ok;
    };
    for (; i < all.length && all[i]!.seq <= this.untilSeq; i++) {
      const e = all[i]!;
      this.nextSeq = e.seq + 1;
      if (!wanted(this.q, e) || (this.q.sinceUs !== null && e.tsUs < this.q.sinceUs)) continue;
      const entryFd = this.q.format.kind === 'docker' && e.stream === 'stderr' ? 'stderr' : 'stdout';
      if (entryFd !== fd && !flush()) {
        this.waiting = true;
        this.nextSeq = e.seq;
        return;
      }
      fd = entryFd;
      buf += renderEntry(this.host, this.q.service, this.q.format, e);
      if (buf.length > 32_768 && !flush()) {
        this.waiting = true;
        return;
      }
    }
    if (!flush()) this.waiting = true;
    // A one-shot answer larger than the window ends after its rest went out on drain.
    if (!this.q.follow && !this.waiting && this.nextSeq > this.untilSeq) {
      this.stopped = true;
      this.sink.end(0);
    }
  }
}
