// `gpu-console alerts`'s words and flags, checked before anything is asked of
// the console: a bad one is a usage error (exit 2) that names it. Pure: the
// time `--since` counts back from is handed in. What only the console knows
// (is the host in the config, is the alert open) it answers with its codes.
import { parseArgs } from 'node:util';
import { AlertKindSchema, SILENCE_MAX_MS, SILENCE_MIN_MS } from '../../../src-preload/contract/index.js';
import { UsageError } from '../output.js';
import { parseSince } from './logs-args.js';

export const ALERTS_USAGE = `usage: gpu-console alerts [list]
       gpu-console alerts ack ID [--note TEXT]
       gpu-console alerts silence RULE|all [--host H] [--service S] [--model M] --for DURATION --reason TEXT
       gpu-console alerts unsilence SILENCE_ID
       gpu-console alerts history [--since 12h|ISO_TIME] [--host H] [--limit N]
       (each takes --json and --data-dir DIR)`;

export interface SilenceArgs {
  verb: 'silence';
  rule: string;
  host: string | undefined;
  serviceId: string | undefined;
  model: string | undefined;
  forMs: number;
  reason: string;
}

export type AlertsArgs = { dataDir: string | undefined; json: boolean } & (
  | { verb: 'list' }
  | { verb: 'ack'; id: string; note: string | undefined }
  | SilenceArgs
  | { verb: 'unsilence'; id: string }
  | { verb: 'history'; fromMs: number | undefined; host: string | undefined; limit: number | undefined }
);

const UNIT_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION = /^(?:\d+[smhd])+$/;

/** `--for`: 90m, 2h, 1h30m, 1d — from 1 minute to 30 days (the contract's bounds). */
export function parseSilenceFor(value: string): number {
  const text = value.trim();
  if (!DURATION.test(text)) {
    throw new UsageError(`--for must be a duration such as 30m, 2h, 1h30m or 1d (from 1m to 30d), got "${value}"`);
  }
  let ms = 0;
  for (const [, n, unit] of text.matchAll(/(\d+)([smhd])/g)) ms += Number(n) * UNIT_MS[unit!]!;
  if (ms < SILENCE_MIN_MS) throw new UsageError(`--for must be at least 1m (a silence lasts at least a minute), got "${value}"`);
  if (ms > SILENCE_MAX_MS) throw new UsageError(`--for must be at most 30d (a maintenance window, not a mute), got "${value}"`);
  return ms;
}

// parseArgs reads "--for -5m" as a second option; "--for=-5m" keeps it a value, so it is refused for what it is.
function joinNegativeValues(args: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const next = args[i + 1];
    if ((a === '--for' || a === '--since') && next !== undefined && /^-\d/.test(next)) {
      out.push(`${a}=${next}`);
      i++;
    } else out.push(a);
  }
  return out;
}

function parse(args: readonly string[]) {
  try {
    return parseArgs({
      args: joinNegativeValues(args),
      options: {
        note: { type: 'string' },
        host: { type: 'string' },
        service: { type: 'string' },
        model: { type: 'string' },
        for: { type: 'string' },
        reason: { type: 'string' },
        since: { type: 'string' },
        limit: { type: 'string' },
        json: { type: 'boolean', default: false },
        'data-dir': { type: 'string' },
      },
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    throw new UsageError(`${(err as Error).message.replace(/\. To specify a positional argument.*$/s, '')}\n${ALERTS_USAGE}`);
  }
}

/** The flags a verb takes; any other is refused by name (a --reason on ack is a mistake, not a note). */
const FLAGS: Record<string, readonly string[]> = {
  list: [],
  ack: ['note'],
  silence: ['host', 'service', 'model', 'for', 'reason'],
  unsilence: [],
  history: ['since', 'host', 'limit'],
};

export function parseAlertsArgs(args: readonly string[], nowMs: number): AlertsArgs {
  const { values, positionals } = parse(args);
  const [verb = 'list', ...rest] = positionals;
  const allowed = FLAGS[verb];
  if (allowed === undefined) throw new UsageError(`unknown alerts command "${verb}"\n${ALERTS_USAGE}`);
  for (const flag of ['note', 'host', 'service', 'model', 'for', 'reason', 'since', 'limit'] as const) {
    if (values[flag] !== undefined && !allowed.includes(flag)) throw new UsageError(`alerts ${verb} takes no --${flag}\n${ALERTS_USAGE}`);
  }
  const common = { dataDir: values['data-dir'], json: values.json === true };
  const one = (what: string): string => {
    if (rest.length !== 1) throw new UsageError(`alerts ${verb} takes one ${what}, got ${rest.length === 0 ? 'none' : `"${rest.join(' ')}"`}\n${ALERTS_USAGE}`);
    return rest[0]!;
  };
  switch (verb) {
    case 'list':
      if (rest.length > 0) throw new UsageError(`alerts list takes no arguments\n${ALERTS_USAGE}`);
      return { ...common, verb };
    case 'ack':
      return { ...common, verb, id: one('alert ID (as alerts list shows it)'), note: values.note };
    case 'unsilence':
      return { ...common, verb, id: one('silence ID (as alerts list shows it)') };
    case 'silence':
      return { ...common, ...silenceArgs(one('RULE (or all)'), values) };
    default:
      if (rest.length > 0) throw new UsageError(`alerts history takes no arguments\n${ALERTS_USAGE}`);
      return { ...common, verb: 'history', fromMs: values.since === undefined ? undefined : parseSince(values.since, nowMs), host: values.host, limit: limitOf(values.limit) };
  }
}

function silenceArgs(rule: string, values: { host?: string; service?: string; model?: string; for?: string; reason?: string }): SilenceArgs {
  if (rule !== 'all' && !AlertKindSchema.safeParse(rule).success) {
    throw new UsageError(`unknown rule "${rule}"; one of: all, ${AlertKindSchema.options.join(', ')}`);
  }
  if (values.for === undefined) throw new UsageError(`alerts silence needs --for DURATION (30m, 2h, 1d)\n${ALERTS_USAGE}`);
  const reason = values.reason?.trim() ?? '';
  if (reason.length < 3) throw new UsageError('alerts silence needs --reason TEXT saying why (at least 3 characters): it is recorded with the silence');
  return { verb: 'silence', rule, host: values.host, serviceId: values.service, model: values.model, forMs: parseSilenceFor(values.for), reason };
}

function limitOf(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 2000) throw new UsageError(`--limit must be a whole number from 1 to 2000, got "${value}"`);
  return Number(value);
}
