// `gpu-console logs`'s flags, checked before anything is asked of the console:
// a bad one is a usage error (exit 2) that names it. Pure: the time `--since`
// counts back from is handed in.
import { parseArgs } from 'node:util';
import { LogFilterSchema, UpstreamKeySchema, type LogFilter } from '../../../src-preload/contract/index.js';
import { UsageError } from '../output.js';

export const LOGS_USAGE = 'usage: gpu-console logs HOST/SERVICE [--tail N] [--since T] [--follow] [--grep TEXT [--regex] [-i]] [--timestamps] [--json]';

/** The console's own bounds (contract/logs.ts): a tail's last N lines, a follow's lines before now. */
export const MAX_TAIL_LINES = 5000;
export const MAX_FOLLOW_LINES = 1000;
/** When --tail is not given: the console's defaults. */
export const DEFAULT_TAIL_LINES = 200;
export const DEFAULT_FOLLOW_LINES = 100;

export interface LogsArgs {
  label: string;
  serviceId: string;
  dataDir: string | undefined;
  lines: number;
  sinceMs: number | undefined;
  follow: boolean;
  filter: LogFilter | undefined;
  timestamps: boolean;
  json: boolean;
}

const UNIT_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION = /^(?:\d+[smhd])+$/;
// A date and a time with a zone: a time without one would be read in this machine's zone, which the
// host's log may not share.
const ISO_TIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:?\d{2})$/i;

/** `--since`: a duration back from `nowMs` (10m, 2h, 1h30m, 45s, 7d) or an ISO time with its zone; epoch ms. */
export function parseSince(value: string, nowMs: number): number {
  const text = value.trim();
  if (DURATION.test(text)) {
    let ms = 0;
    for (const [, n, unit] of text.matchAll(/(\d+)([smhd])/g)) ms += Number(n) * UNIT_MS[unit!]!;
    if (ms <= 0) throw new UsageError(`--since must be a duration above zero, got "${value}"`);
    if (ms > nowMs) throw new UsageError(`--since ${value} reaches back before 1970`);
    return nowMs - ms;
  }
  if (ISO_TIME.test(text)) {
    const ms = Date.parse(text.replace(' ', 'T').replace(/([+-]\d{2})(\d{2})$/, '$1:$2'));
    if (!Number.isFinite(ms)) throw new UsageError(`--since "${value}" is not a real date and time`);
    if (ms > nowMs) throw new UsageError(`--since ${value} is in the future`);
    return ms;
  }
  throw new UsageError(`--since must be a duration (10m, 2h, 1h30m, 7d) or an ISO time with a zone (2026-12-05T01:30:00Z), got "${value}"`);
}

function lineCount(value: string | undefined, follow: boolean): number {
  if (value === undefined) return follow ? DEFAULT_FOLLOW_LINES : DEFAULT_TAIL_LINES;
  const [min, max] = follow ? [0, MAX_FOLLOW_LINES] : [1, MAX_TAIL_LINES];
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new UsageError(`--tail must be a whole number from ${min} to ${max}${follow ? ' with --follow' : ''}, got "${value}"`);
  }
  return Number(value);
}

function filterOf(grep: string | undefined, regex: boolean, ignoreCase: boolean): LogFilter | undefined {
  if (grep === undefined) {
    if (regex) throw new UsageError('--regex needs --grep PATTERN');
    if (ignoreCase) throw new UsageError('-i needs --grep PATTERN');
    return undefined;
  }
  const parsed = LogFilterSchema.safeParse({ pattern: grep, regex, ignoreCase });
  if (!parsed.success) throw new UsageError(`--grep must be 1 to 500 characters, got ${grep.length}`);
  return parsed.data;
}

export function parseLogsArgs(args: string[], nowMs: number): LogsArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      options: {
        tail: { type: 'string' },
        since: { type: 'string' },
        follow: { type: 'boolean', short: 'f', default: false },
        grep: { type: 'string' },
        regex: { type: 'boolean', default: false },
        'ignore-case': { type: 'boolean', short: 'i', default: false },
        timestamps: { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
        'data-dir': { type: 'string' },
      },
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    throw new UsageError(`${(err as Error).message.replace(/\. To specify a positional argument.*$/s, '')}\n${LOGS_USAGE}`);
  }
  const { values, positionals } = parsed;
  if (positionals.length !== 1) throw new UsageError(positionals.length === 0 ? LOGS_USAGE : `logs takes one HOST/SERVICE, got "${positionals.join(' ')}"\n${LOGS_USAGE}`);
  const key = UpstreamKeySchema.safeParse(positionals[0]);
  if (!key.success) throw new UsageError(`"${positionals[0]}" is not HOST/SERVICE (a host label and a service id, as in gpu-a/vllm)`);
  const slash = key.data.indexOf('/');
  const follow = values.follow === true;
  return {
    label: key.data.slice(0, slash),
    serviceId: key.data.slice(slash + 1),
    dataDir: values['data-dir'],
    lines: lineCount(values.tail, follow),
    sinceMs: values.since === undefined ? undefined : parseSince(values.since, nowMs),
    follow,
    filter: filterOf(values.grep, values.regex === true, values['ignore-case'] === true),
    timestamps: values.timestamps === true,
    json: values.json === true,
  };
}
