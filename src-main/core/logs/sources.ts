// Which log source a service has (its `logs` block, or what its lifecycle
// block implies) and the command that reads it: the last N lines, since a
// time, following, or resuming a follow after a link drop. Every value is one
// shell-quoted word (shellJoin, renderCommand); options are written as
// `--name=value` or put after `--`, so a value can never read as an option.
import type { LogSourceConfig, ServiceConfig } from '../config/index.js';
import { AppError } from '../base/index.js';
import { renderCommand, shellJoin } from '../ssh/index.js';
import { LogsErrorCode } from './errors.js';

export type LogSource =
  | { kind: 'journal'; unit: string; user: boolean }
  | { kind: 'compose'; service: string; files: readonly string[]; project: string | null; projectDirectory: string | null; sudo: boolean }
  | { kind: 'docker'; container: string; sudo: boolean }
  | { kind: 'file'; path: string }
  | { kind: 'command'; tail: string; follow: string | null };

export type LogSourceKind = LogSource['kind'];

/** Where a follow picks up after its stream ended: the journal's cursor, or docker's timestamp of the last line. */
export type ResumePoint = { cursor: string } | { timestamp: string };

export interface LogQuery {
  /** Lines before now (a tail's N, a follow's backlog); 0 for none. */
  lines: number;
  /** Epoch ms; lines from then on. */
  sinceMs?: number;
  follow: boolean;
  /** A follow resumed after its stream ended: from here, without a backlog. */
  resume?: ResumePoint;
}

/** What a command template may name, besides `{lines}` and `{since}`. */
export interface CommandVars {
  service: string;
  host: string;
  model: string;
  port: number;
}

/** The service's source: its `logs` block, else journalctl of its systemd unit, else its compose service's logs; null when none. */
export function logSourceOf(service: Pick<ServiceConfig, 'logs' | 'lifecycle'>): LogSource | null {
  if (service.logs) return fromConfig(service.logs);
  const lc = service.lifecycle;
  if (lc?.systemdUnit !== undefined) return { kind: 'journal', unit: lc.systemdUnit, user: lc.systemdUser === true };
  if (lc?.compose !== undefined) {
    const c = lc.compose;
    return { kind: 'compose', service: c.service, files: c.file !== undefined ? [c.file] : [], project: c.project ?? null, projectDirectory: null, sudo: lc.useSudo === true };
  }
  return null;
}

function fromConfig(c: LogSourceConfig): LogSource {
  if (c.journal !== undefined) return typeof c.journal === 'string' ? { kind: 'journal', unit: c.journal, user: false } : { kind: 'journal', unit: c.journal.unit, user: c.journal.user === true };
  if (c.compose !== undefined) {
    const x = c.compose;
    return { kind: 'compose', service: x.service, files: x.files ?? [], project: x.project ?? null, projectDirectory: x.projectDirectory ?? null, sudo: x.sudo === true };
  }
  if (c.docker !== undefined) return typeof c.docker === 'string' ? { kind: 'docker', container: c.docker, sudo: false } : { kind: 'docker', container: c.docker.container, sudo: c.docker.sudo === true };
  if (c.file !== undefined) return { kind: 'file', path: c.file };
  const cmd = c.command!;
  return typeof cmd === 'string' ? { kind: 'command', tail: cmd, follow: null } : { kind: 'command', tail: cmd.tail, follow: cmd.follow ?? null };
}

/** Whether lines of this source carry the source's own timestamp (so `since` and a resume can work). */
export function hasTimestamps(source: LogSource): boolean {
  return source.kind === 'journal' || source.kind === 'compose' || source.kind === 'docker';
}

/** The command that reads `source` as `query` asks; throws LOGS_SINCE_UNSUPPORTED / LOGS_FOLLOW_UNSUPPORTED. */
export function logCommand(source: LogSource, query: LogQuery, vars: CommandVars): string {
  switch (source.kind) {
    case 'journal':
      return shellJoin(journalArgs(source, query));
    case 'compose':
    case 'docker':
      return shellJoin(dockerArgs(source, query));
    case 'file':
      if (query.sinceMs !== undefined) throw sinceUnsupported('a file source (tail) has no timestamps');
      // -F follows the name through rotation and says so on stderr; a resume starts at the end (-n 0).
      return shellJoin(['tail', `--lines=${query.resume ? 0 : query.lines}`, ...(query.follow ? ['-F'] : []), '--', source.path]);
    case 'command':
      return commandSource(source, query, vars);
  }
}

function journalArgs(source: Extract<LogSource, { kind: 'journal' }>, q: LogQuery): string[] {
  const args = ['journalctl', ...(source.user ? ['--user'] : []), `--unit=${source.unit}`, '--output=json', '--all', '--no-pager', '--output-fields=MESSAGE,PRIORITY,_PID,SYSLOG_IDENTIFIER'];
  if (q.resume && 'cursor' in q.resume) args.push(`--after-cursor=${q.resume.cursor}`, '--lines=all');
  else {
    if (q.sinceMs !== undefined) args.push(`--since=@${Math.floor(q.sinceMs / 1000)}`);
    args.push(q.sinceMs !== undefined && q.lines === 0 ? '--lines=all' : `--lines=${q.lines}`);
  }
  if (q.follow) args.push('--follow');
  return args;
}

function dockerArgs(source: Extract<LogSource, { kind: 'compose' | 'docker' }>, q: LogQuery): string[] {
  const opts = ['--timestamps'];
  if (q.resume && 'timestamp' in q.resume) opts.push(`--since=${q.resume.timestamp}`);
  else {
    if (q.sinceMs !== undefined) opts.push(`--since=${new Date(q.sinceMs).toISOString()}`);
    opts.push(`--tail=${q.sinceMs !== undefined && q.lines === 0 ? 'all' : q.lines}`);
  }
  if (q.follow) opts.push('--follow');
  const sudo = source.sudo ? ['sudo', '-n'] : [];
  if (source.kind === 'docker') return [...sudo, 'docker', 'logs', ...opts, '--', source.container];
  const global = [
    ...source.files.flatMap((f) => ['-f', f]),
    ...(source.project !== null ? ['-p', source.project] : []),
    ...(source.projectDirectory !== null ? [`--project-directory=${source.projectDirectory}`] : []),
  ];
  return [...sudo, 'docker', 'compose', ...global, 'logs', '--no-color', '--no-log-prefix', ...opts, '--', source.service];
}

function commandSource(source: Extract<LogSource, { kind: 'command' }>, q: LogQuery, vars: CommandVars): string {
  const template = q.follow ? source.follow : source.tail;
  if (template === null) {
    throw new AppError(LogsErrorCode.FOLLOW_UNSUPPORTED, 'this log command has no follow template: add logs.command.follow (a command that keeps printing, such as `vllmctl logs -f {service}`)', {
      details: { tail: source.tail },
    });
  }
  const wanted = /\{since\}/.test(template);
  if (q.sinceMs !== undefined && !wanted) throw sinceUnsupported('this log command has no {since} placeholder');
  const args: Record<string, string | number> = { ...vars };
  if (/\{lines\}/.test(template)) args['lines'] = q.lines;
  if (wanted) args['since'] = new Date(q.sinceMs ?? 0).toISOString();
  // Only the names the template uses: renderCommand refuses extras (a typo would silently do nothing).
  const used = Object.fromEntries(Object.entries(args).filter(([k]) => template.includes(`{${k}}`)));
  return renderCommand(template, used);
}

function sinceUnsupported(why: string): AppError {
  return new AppError(LogsErrorCode.SINCE_UNSUPPORTED, `"since" cannot be asked here: ${why}; ask for the last N lines instead`);
}
