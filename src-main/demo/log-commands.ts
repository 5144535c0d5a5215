// The log commands a demo host answers, parsed from argv as the real tools
// take them: journalctl (-u/--unit, -o/--output json or short-iso-precise,
// -n/--lines, --since, --after-cursor, -f/--follow), docker compose [-f …]
// logs (--timestamps, --tail, --since, --no-log-prefix, -f) and docker logs,
// tail (-n N, -F). Each becomes a LogQuery on one service's ServiceLog; what
// the tool would print for an entry is `render`. Unknown options fail as the
// tool does (exit 1 with its usage line), never silently.
import type { LogPlaces } from './log-places.js';
import type { LogEntryRecord, ServiceLog } from './service-log.js';

/** One service of the host as its logs can be named. */
export interface LogService {
  places: LogPlaces;
  log: ServiceLog;
  /** SYSLOG_IDENTIFIER of the service's own lines (the executable: `vllm`, `llama-server`). */
  identifier: string;
}

export type LogFormat = { kind: 'json'; fields: readonly string[] | null } | { kind: 'short-iso-precise' } | { kind: 'docker'; timestamps: boolean; prefix: string | null } | { kind: 'plain' };

export interface LogQuery {
  service: LogService;
  format: LogFormat;
  /** null: all. */
  lines: number | null;
  sinceUs: number | null;
  afterSeq: number | null;
  follow: boolean;
  /** journal: systemd's lines about the unit too; docker and files: the process's only. */
  withSystemd: boolean;
  /** Said on stderr once at the start (tail -F about a file it waits for). */
  notice?: string;
}

export interface ToolAnswer {
  stdout: string;
  stderr: string;
  /** STILL_RUNNING: the tool said this and waits (tail -F for a file that is not there yet). */
  code: number;
}

export const STILL_RUNNING = -1;

export type ParsedLogCommand = { query: LogQuery } | { answer: ToolAnswer };

const fail = (stderr: string, code = 1): ParsedLogCommand => ({ answer: { stdout: '', stderr, code } });

/** Splits `--name=value`, and takes the next word for `--name value` / `-x value`. */
class Args {
  private i = 0;
  constructor(private readonly argv: readonly string[]) {}
  next(): string | undefined {
    return this.argv[this.i++];
  }
  value(word: string): string | undefined {
    const eq = word.indexOf('=');
    return word.startsWith('--') && eq > 0 ? word.slice(eq + 1) : this.next();
  }
  rest(): string[] {
    const r = this.argv.slice(this.i);
    this.i = this.argv.length;
    return r;
  }
}

const nameOf = (word: string) => (word.startsWith('--') && word.includes('=') ? word.slice(0, word.indexOf('=')) : word);

/** The log command `argv` is (sudo -n stripped), or null when it is no log command. */
export function parseLogCommand(argv: readonly string[], services: readonly LogService[]): ParsedLogCommand | null {
  const a = argv[0] === 'sudo' && argv[1] === '-n' ? argv.slice(2) : argv;
  if (a[0] === 'journalctl') return parseJournalctl(a.slice(1), services);
  if (a[0] === 'docker' && a[1] === 'compose') return parseCompose(a.slice(2), services);
  if (a[0] === 'docker' && a[1] === 'logs') return parseDockerLogs(a.slice(2), services, null);
  if (a[0] === 'tail') return parseTail(a.slice(1), services);
  return null;
}

function parseLines(v: string | undefined, tool: string): number | null | 'bad' {
  if (v === 'all' || (tool === 'docker' && v === '-1')) return null;
  return v !== undefined && /^\d+$/.test(v) ? Number(v) : 'bad';
}

function parseJournalctl(argv: readonly string[], services: readonly LogService[]): ParsedLogCommand {
  const args = new Args(argv);
  let unit: string | null = null;
  let format: LogFormat = { kind: 'short-iso-precise' };
  let fields: string[] | null = null;
  const q = { lines: null as number | null, sinceUs: null as number | null, afterSeq: null as number | null, follow: false };
  for (let w = args.next(); w !== undefined; w = args.next()) {
    const n = nameOf(w);
    if (n === '-u' || n === '--unit') unit = args.value(w) ?? '';
    else if (n === '-o' || n === '--output') {
      const o = args.value(w);
      if (o === 'json') format = { kind: 'json', fields: null };
      else if (o === 'short-iso-precise') format = { kind: 'short-iso-precise' };
      else return fail(`Unknown output format '${o ?? ''}'.\n`);
    } else if (n === '--output-fields') fields = (args.value(w) ?? '').split(',');
    else if (n === '-n' || n === '--lines') {
      const l = parseLines(args.value(w), 'journalctl');
      if (l === 'bad') return fail('Failed to parse lines.\n');
      q.lines = l;
    } else if (n === '--since') {
      const s = parseJournalSince(args.value(w) ?? '');
      if (s === null) return fail(`Failed to parse timestamp: ${w}\n`);
      q.sinceUs = s;
    } else if (n === '--after-cursor') {
      const i = /(?:^|;)i=([0-9a-f]+)/.exec(args.value(w) ?? '')?.[1];
      if (i === undefined) return fail('Failed to seek to cursor: Invalid argument\n');
      q.afterSeq = parseInt(i, 16);
    } else if (n === '-f' || n === '--follow') q.follow = true;
    else if (n === '--user') return fail('No journal files were found.\n');
    else if (n !== '-a' && n !== '--all' && n !== '--no-pager' && n !== '-q' && n !== '--quiet') return fail(`journalctl: unrecognized option '${w}'\n`);
  }
  if (format.kind === 'json') format = { kind: 'json', fields };
  const want = unit === null ? null : unit.endsWith('.service') ? unit : `${unit}.service`;
  const service = services.find((s) => s.places.unit === want);
  // journalctl for a unit with no entries prints "-- No entries --" and exits 0 (nothing in json output).
  if (!service) return { answer: { stdout: format.kind === 'json' ? '' : '-- No entries --\n', stderr: '', code: 0 } };
  return { query: { service, format, ...q, withSystemd: true } };
}

/** journalctl's `--since`: `@<epoch seconds>` or `YYYY-MM-DD HH:MM:SS` (UTC, the demo hosts' zone). */
function parseJournalSince(v: string): number | null {
  if (/^@\d+(\.\d+)?$/.test(v)) return Math.floor(Number(v.slice(1)) * 1e6);
  const ms = Date.parse(v.replace(' ', 'T') + (/[zZ]|[+-]\d\d:?\d\d$/.test(v) ? '' : 'Z'));
  return Number.isFinite(ms) ? ms * 1000 : null;
}

/** docker's `--since`: RFC 3339 (nanoseconds kept to the microsecond) or epoch seconds. */
function parseDockerSince(v: string): number | null {
  if (/^\d+(\.\d+)?$/.test(v)) return Math.floor(Number(v) * 1e6);
  const m = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$/.exec(v);
  if (!m) return null;
  const ms = Date.parse(`${m[1]}${m[3]}`);
  if (!Number.isFinite(ms)) return null;
  return ms * 1000 + Math.floor(Number(`0.${m[2] ?? '0'}`) * 1e6);
}

/** `docker compose [-f file]… [-p project] logs …`; another subcommand (restart) is not a log command: null. */
function parseCompose(argv: readonly string[], services: readonly LogService[]): ParsedLogCommand | null {
  const args = new Args(argv);
  const files: string[] = [];
  for (let w = args.next(); w !== undefined; w = args.next()) {
    const n = nameOf(w);
    if (n === '-f' || n === '--file') files.push(args.value(w) ?? '');
    else if (n === '-p' || n === '--project-name' || n === '--project-directory') args.value(w);
    else if (w === 'logs') return parseDockerLogs(args.rest(), services, files);
    else return null;
  }
  return null;
}

function parseDockerLogs(argv: readonly string[], services: readonly LogService[], composeFiles: string[] | null): ParsedLogCommand {
  const args = new Args(argv);
  const q = { lines: null as number | null, sinceUs: null as number | null, follow: false };
  let timestamps = false;
  let prefix = composeFiles !== null;
  let target: string | undefined;
  for (let w = args.next(); w !== undefined; w = args.next()) {
    const n = nameOf(w);
    if (n === '-t' || n === '--timestamps') timestamps = true;
    else if (n === '--no-log-prefix') prefix = false;
    else if (n === '--no-color') continue;
    else if (n === '-f' || n === '--follow') q.follow = true;
    else if (n === '-n' || n === '--tail') {
      const l = parseLines(args.value(w), 'docker');
      if (l === 'bad') return fail(`invalid value for --tail: ${w}\n`);
      q.lines = l;
    } else if (n === '--since') {
      const s = parseDockerSince(args.value(w) ?? '');
      if (s === null) return fail(`invalid value for "since": ${w}\n`);
      q.sinceUs = s;
    } else if (w === '--') target = args.next();
    else if (w.startsWith('-')) return fail(`unknown flag: ${w}\n`);
    else target = w;
  }
  if (composeFiles !== null) {
    const file = composeFiles[composeFiles.length - 1];
    const inFile = services.filter((s) => s.places.compose && (file === undefined || s.places.compose.file === file));
    if (inFile.length === 0) return fail(`open ${file ?? 'compose.yaml'}: no such file or directory\n`, 14);
    const service = inFile.find((s) => s.places.compose!.service === target);
    if (!service) return fail(`no such service: ${target ?? ''}\n`);
    return { query: { service, format: { kind: 'docker', timestamps, prefix: prefix ? `${service.places.container}  | ` : null }, afterSeq: null, ...q, withSystemd: false } };
  }
  const service = services.find((s) => s.places.container === target);
  if (!service) return fail(`Error response from daemon: No such container: ${target ?? ''}\n`);
  return { query: { service, format: { kind: 'docker', timestamps, prefix: null }, afterSeq: null, ...q, withSystemd: false } };
}

function parseTail(argv: readonly string[], services: readonly LogService[]): ParsedLogCommand {
  const args = new Args(argv);
  let lines: number | null = 10;
  let follow = false;
  let path: string | undefined;
  for (let w = args.next(); w !== undefined; w = args.next()) {
    const n = nameOf(w);
    if (n === '-n' || n === '--lines' || /^-n\d+$/.test(w)) {
      const v = /^-n\d+$/.test(w) ? w.slice(2) : args.value(w);
      if (v === undefined || !/^\d+$/.test(v)) return fail(`tail: invalid number of lines: '${v ?? ''}'\n`);
      lines = Number(v);
    } else if (w === '-F' || w === '-f' || w === '--follow' || w === '--follow=name' || w === '--retry') follow = true;
    else if (w === '--') path = args.next();
    else if (w.startsWith('-')) return fail(`tail: unrecognized option '${w}'\nTry 'tail --help' for more information.\n`);
    else path = w;
  }
  const service = services.find((s) => s.places.file === path);
  const missing = `tail: cannot open '${path ?? ''}' for reading: No such file or directory\n`;
  if (!service) return follow ? { answer: { stdout: '', stderr: missing, code: STILL_RUNNING } } : fail(missing);
  return { query: { service, format: { kind: 'plain' }, lines, sinceUs: null, afterSeq: null, follow, withSystemd: false } };
}

/** The entries the query selects from what the log holds now (its backlog). */
export function selectEntries(q: LogQuery): LogEntryRecord[] {
  let out = q.service.log.entries().filter((e) => (q.withSystemd || e.writer === 'service') && (q.sinceUs === null || e.tsUs >= q.sinceUs) && (q.afterSeq === null || e.seq > q.afterSeq));
  if (q.lines !== null) out = q.lines === 0 ? [] : out.slice(-q.lines);
  return out;
}

export function wanted(q: LogQuery, e: LogEntryRecord): boolean {
  return q.withSystemd || e.writer === 'service';
}
