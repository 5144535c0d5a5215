// Reading what a log command prints: its lines as records (with the source's
// own timestamp and resume point where it gives one), the notices `tail -F`
// writes about rotation and truncation, and the errors of journalctl, docker
// and tail turned into coded errors that name the fix.
import { AppError } from '../base/index.js';
import { LogsErrorCode } from './errors.js';
import { decodeLine, type RawLine } from './lines.js';
import type { LogSource, LogSourceKind } from './sources.js';

export interface LogRecord {
  /** Epoch ms the source gave the line; null when it gives none (a file, a command). */
  ts: number | null;
  text: string;
  stream: 'stdout' | 'stderr';
  cutBytes: number;
  binary: boolean;
  /** journald's cursor of the entry (the last line of a multi-line entry carries it). */
  cursor?: string;
  /** docker's own timestamp text (RFC 3339, nanoseconds), for `--since` on resume. */
  rawTs?: string;
}

export type NoticeKind = 'file-rotated' | 'file-truncated' | 'file-missing';
export interface SourceNotice {
  notice: NoticeKind;
  text: string;
}

/** journalctl's JSON lines are held whole (up to this) so that a long MESSAGE can be parsed and then cut. */
export const JOURNAL_JSON_MAX_BYTES = 2 * 1024 * 1024;

const DOCKER_TS = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})) ?/;

/** The records of one stdout line of `kind`'s command. */
export function parseStdout(kind: LogSourceKind, raw: RawLine, maxLineBytes: number): LogRecord[] {
  if (kind === 'journal') return parseJournal(raw, maxLineBytes);
  const d = decodeLine(raw);
  if (kind === 'docker' || kind === 'compose') return [dockerRecord(d, 'stdout')];
  return [{ ts: null, text: d.text, stream: 'stdout', cutBytes: d.cutBytes, binary: d.binary }];
}

function dockerRecord(d: ReturnType<typeof decodeLine>, stream: LogRecord['stream']): LogRecord {
  const m = d.binary ? null : DOCKER_TS.exec(d.text);
  if (!m) return { ts: null, text: d.text, stream, cutBytes: d.cutBytes, binary: d.binary };
  const ts = Date.parse(m[1]!);
  return { ts: Number.isFinite(ts) ? ts : null, rawTs: m[1]!, text: d.text.slice(m[0].length), stream, cutBytes: d.cutBytes, binary: false };
}

function parseJournal(raw: RawLine, maxLineBytes: number): LogRecord[] {
  const head = raw.bytes.toString('utf8');
  if (raw.cutBytes > 0) {
    // Too large to parse: the entry is named, its position kept where the kept head shows it.
    const cursor = /"__CURSOR"\s*:\s*"([^"]+)"/.exec(head)?.[1];
    const us = /"__REALTIME_TIMESTAMP"\s*:\s*"(\d+)"/.exec(head)?.[1];
    const size = raw.bytes.length + raw.cutBytes;
    return [{ ts: us ? Math.floor(Number(us) / 1000) : null, text: `[journal entry of ${size} bytes: too large to show]`, stream: 'stdout', cutBytes: size, binary: false, ...(cursor ? { cursor } : {}) }];
  }
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(head) as Record<string, unknown>;
  } catch {
    const d = decodeLine(raw);
    return [{ ts: null, text: d.text, stream: 'stdout', cutBytes: d.cutBytes, binary: d.binary }];
  }
  const msg = entry['MESSAGE'];
  // journald stores a message that is not valid UTF-8 as an array of bytes; a field it withheld as null.
  const bytes = typeof msg === 'string' ? Buffer.from(msg, 'utf8') : Array.isArray(msg) ? Buffer.from(msg.filter((b): b is number => typeof b === 'number')) : Buffer.alloc(0);
  const us = typeof entry['__REALTIME_TIMESTAMP'] === 'string' ? Number(entry['__REALTIME_TIMESTAMP']) : NaN;
  const ts = Number.isFinite(us) ? Math.floor(us / 1000) : null;
  const cursor = typeof entry['__CURSOR'] === 'string' ? entry['__CURSOR'] : undefined;
  // A multi-line message is several lines of the view, the cursor on the last.
  const parts = splitBytes(bytes);
  return parts.map((part, i) => {
    const d = decodeLine({ bytes: part.length > maxLineBytes ? part.subarray(0, maxLineBytes) : part, cutBytes: Math.max(0, part.length - maxLineBytes) });
    return { ts, text: d.text, stream: 'stdout' as const, cutBytes: d.cutBytes, binary: d.binary, ...(cursor && i === parts.length - 1 ? { cursor } : {}) };
  });
}

function splitBytes(bytes: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let from = 0;
  for (let nl = bytes.indexOf(0x0a); nl >= 0; nl = bytes.indexOf(0x0a, from)) {
    out.push(bytes.subarray(from, nl));
    from = nl + 1;
  }
  out.push(bytes.subarray(from));
  return out;
}

// GNU tail's notices (coreutils 8–9): `tail: 'x' has been replaced;  following new file`, `tail: x: file truncated`.
const TAIL_NOTICES: readonly (readonly [NoticeKind, RegExp])[] = [
  ['file-truncated', /^tail: .*: file truncated$/],
  ['file-rotated', /^tail: .* has (?:been replaced|appeared);\s+following (?:new|end of new) file$/],
  ['file-missing', /^tail: .* has become inaccessible: No such file or directory$|^tail: cannot open .* for reading: No such file or directory$|^tail: directory containing watched file was removed/],
];

/** A stderr line of `kind`'s command: a notice (tail -F), or a record (docker's stderr is the container's). */
export function parseStderr(kind: LogSourceKind, raw: RawLine): SourceNotice | LogRecord {
  const d = decodeLine(raw);
  if (kind === 'file') for (const [notice, re] of TAIL_NOTICES) if (re.test(d.text)) return { notice, text: d.text };
  if (kind === 'docker' || kind === 'compose') return dockerRecord(d, 'stderr');
  return { ts: null, text: d.text, stream: 'stderr', cutBytes: d.cutBytes, binary: d.binary };
}

export function isNotice(x: SourceNotice | LogRecord): x is SourceNotice {
  return 'notice' in x;
}

/**
 * The coded error a command's stderr (and exit status) shows, or null when it
 * shows none. `user` is the SSH user (named in the fix); `following` makes a
 * missing file a notice rather than an error (tail -F waits for it).
 */
export function sourceProblem(source: LogSource, stderr: string, exitCode: number | null, user: string, following = false): AppError | null {
  const where = describeSource(source);
  const sudoHint = /sudo: (?:a password is required|a terminal is required|sorry, you must have a tty)/.exec(stderr);
  if (sudoHint) return new AppError(LogsErrorCode.NOT_PERMITTED, `${where}: sudo wants a password for ${user} (the console runs sudo -n); allow the command in sudoers with NOPASSWD, or drop sudo from the log source`, { details: { source: source.kind } });
  if (exitCode === 127 || /command not found|No such file or directory.*(?:journalctl|docker)|: not found$/m.test(stderr)) {
    if (source.kind !== 'file' || exitCode === 127) return new AppError(LogsErrorCode.TOOL_MISSING, `${where}: the host has no ${toolOf(source)} for ${user}: ${lastLine(stderr) || `exit ${exitCode}`}`, { details: { source: source.kind } });
  }
  switch (source.kind) {
    case 'journal':
      if (/not seeing messages from other users and the system|insufficient permissions|Permission denied/i.test(stderr)) {
        return new AppError(LogsErrorCode.NOT_PERMITTED, `${where}: ${user} may not read the system journal; add the user to the systemd-journal group (sudo usermod -aG systemd-journal ${user}) and reconnect`, {
          details: { source: source.kind, group: 'systemd-journal' },
        });
      }
      if (/No journal files were found|Failed to add match|Invalid unit name/i.test(stderr)) return new AppError(LogsErrorCode.SOURCE_MISSING, `${where}: ${lastLine(stderr)}`, { details: { source: source.kind } });
      break;
    case 'docker':
    case 'compose':
      if (/permission denied while trying to connect to the Docker daemon socket|Got permission denied/i.test(stderr)) {
        return new AppError(LogsErrorCode.NOT_PERMITTED, `${where}: ${user} may not talk to Docker; add the user to the docker group (sudo usermod -aG docker ${user}) and reconnect, or set sudo: true on the log source`, {
          details: { source: source.kind, group: 'docker' },
        });
      }
      if (/No such container|no such service|no configuration file provided|not found: no such file|service ".*" is not running|no container found/i.test(stderr)) {
        return new AppError(LogsErrorCode.SOURCE_MISSING, `${where}: ${lastLine(stderr)}`, { details: { source: source.kind } });
      }
      if (/is not a docker command|unknown command "compose"/i.test(stderr)) return new AppError(LogsErrorCode.TOOL_MISSING, `${where}: the host's docker has no compose plugin (docker compose v2)`, { details: { source: source.kind } });
      break;
    case 'file':
      if (/Permission denied/.test(stderr)) return new AppError(LogsErrorCode.NOT_PERMITTED, `${where}: ${user} may not read the file: ${lastLine(stderr)}`, { details: { source: source.kind } });
      if (!following && /cannot open .* No such file or directory|No such file or directory/.test(stderr)) {
        return new AppError(LogsErrorCode.SOURCE_MISSING, `${where}: the file does not exist on the host`, { details: { source: source.kind, path: source.path } });
      }
      break;
    case 'command':
      break;
  }
  return null;
}

export function describeSource(source: LogSource): string {
  switch (source.kind) {
    case 'journal':
      return `journal of ${source.unit}${source.user ? ' (user)' : ''}`;
    case 'compose':
      return `compose service ${source.service}`;
    case 'docker':
      return `container ${source.container}`;
    case 'file':
      return `file ${source.path}`;
    case 'command':
      return 'log command';
  }
}

function toolOf(source: LogSource): string {
  return source.kind === 'journal' ? 'journalctl' : source.kind === 'docker' || source.kind === 'compose' ? 'docker' : source.kind === 'file' ? 'tail' : 'command';
}

function lastLine(text: string): string {
  const lines = text.trim().split('\n');
  return (lines[lines.length - 1] ?? '').slice(0, 300);
}
