// `gpu-console captures list|show|export`: captured requests (config
// `proxy.capture`) through the contract. Lists carry sizes only; `show` and
// `export` hand out bodies, and the core audits each (proxy.capture.viewed /
// proxy.capture.exported, actor `operator:<user>@cli`) before it answers.
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { formatStorageBytes, type CaptureBodyMeta, type CaptureQuery, type CaptureSummary } from '../../../src-preload/contract/index.js';
import { callConsole } from '../core-client.js';
import { resolveDataDir } from '../options.js';
import { EXIT, UsageError, shown, type Output } from '../output.js';
import type { CliCommand } from './types.js';
import { parseSince } from './logs-args.js';

const FILTERS = {
  'data-dir': { type: 'string' },
  json: { type: 'boolean', default: false },
  model: { type: 'string' },
  client: { type: 'string' },
  request: { type: 'string' },
  since: { type: 'string' },
  before: { type: 'string' },
  limit: { type: 'string' },
  ids: { type: 'string' },
  out: { type: 'string' },
} as const;

function parse(args: string[]) {
  try {
    return parseArgs({ args, options: FILTERS, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message.replace(/\. To specify a positional argument.*$/s, ''));
  }
}

function positiveInt(value: string, flag: string, max: number): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < 1 || n > max) throw new UsageError(`${flag} must be a whole number from 1 to ${max}, got "${value}"`);
  return n;
}

type Values = ReturnType<typeof parse>['values'];

/** The filters as the contract takes them; a bad one is a usage error naming the flag. */
export function captureQueryOf(values: Values, maxLimit: number, nowMs: number): CaptureQuery {
  return {
    limit: values.limit !== undefined ? positiveInt(values.limit, '--limit', maxLimit) : Math.min(100, maxLimit),
    ...(values.before !== undefined ? { beforeId: positiveInt(values.before, '--before', Number.MAX_SAFE_INTEGER) } : {}),
    ...(values.model ? { model: values.model } : {}),
    ...(values.client ? { client: values.client } : {}),
    ...(values.request ? { requestId: values.request } : {}),
    ...(values.since !== undefined ? { sinceTs: parseSince(values.since, nowMs) } : {}),
  };
}

function size(m: CaptureBodyMeta): string {
  if (m.encoding === 'empty') return 'empty';
  if (m.encoding !== 'utf8') return `${formatStorageBytes(m.sizeBytes)} ${m.encoding}`;
  return m.truncated ? `${formatStorageBytes(m.storedBytes)}/${formatStorageBytes(m.sizeBytes)}` : formatStorageBytes(m.sizeBytes);
}

function line(c: CaptureSummary): string {
  return `${String(c.id).padStart(6)}  ${new Date(c.ts).toISOString()}  ${String(c.status).padEnd(3)} ${shown(c.errorCode ?? '-').padEnd(22)} ${shown(c.model ?? '-').padEnd(20)} ${shown(c.client).padEnd(16)} req ${size(c.request)}  ans ${size(c.answer)}  ${c.requestId}`;
}

const list: CliCommand = {
  name: 'captures list',
  help: `  captures list [--model M] [--client NAME] [--request ID] [--since 1h] [--before ID] [--limit N]
                        Captured requests, newest first (sizes only; bodies with captures show).`,
  async run(args: string[], output: Output): Promise<number> {
    const { values, positionals } = parse(args);
    if (positionals.length !== 0) throw new UsageError('usage: gpu-console captures list [--model M] [--client NAME] [--request ID] [--since T] [--before ID] [--limit N]');
    const dataDir = resolveDataDir(values['data-dir']);
    const query = captureQueryOf(values, 500, Date.now());
    const status = await callConsole(dataDir, 'proxy.captureStatus', {});
    const { captures } = await callConsole(dataDir, 'proxy.listCaptures', query);
    if (output.json) {
      output.out(JSON.stringify({ status, captures }));
      return EXIT.OK;
    }
    if (!status.enabled) output.out('capture is off (config proxy.capture.enabled); what was captured before is listed until the retention removes it');
    if (captures.length === 0) output.out('no captured requests');
    for (const c of captures) output.out(line(c));
    return EXIT.OK;
  },
};

const show: CliCommand = {
  name: 'captures show',
  help: `  captures show ID      One captured request with its bodies (audited: proxy.capture.viewed).`,
  async run(args: string[], output: Output): Promise<number> {
    const { values, positionals } = parse(args);
    if (positionals.length !== 1) throw new UsageError('usage: gpu-console captures show ID');
    const id = positiveInt(positionals[0]!, 'ID', Number.MAX_SAFE_INTEGER);
    const d = await callConsole(resolveDataDir(values['data-dir']), 'proxy.showCapture', { id });
    if (output.json) {
      output.out(JSON.stringify(d));
      return EXIT.OK;
    }
    output.out(line(d));
    output.out(`trace ${d.traceId ?? '-'}  upstream ${d.upstream ?? '-'}  ${d.endpoint}  (${d.reason})`);
    for (const [title, body] of [['request', d.request], ['answer', d.answer]] as const) {
      output.out(`--- ${title}: ${size(body)}${body.contentType ? `  ${body.contentType}` : ''}`);
      for (const [k, v] of Object.entries(body.headers)) output.out(`${k}: ${shown(v)}`);
      output.out(body.text === null ? `(${body.encoding}: not kept as text)` : body.text);
    }
    return EXIT.OK;
  },
};

const exportCmd: CliCommand = {
  name: 'captures export',
  help: `  captures export [--ids 1,2] [--model M] [--client NAME] [--since T] [--limit N] [--out FILE]
                        Captured requests with their bodies as one JSON document (audited: proxy.capture.exported).`,
  async run(args: string[], output: Output): Promise<number> {
    const { values, positionals } = parse(args);
    if (positionals.length !== 0) throw new UsageError('usage: gpu-console captures export [--ids 1,2] [--model M] [--client NAME] [--since T] [--limit N] [--out FILE]');
    const ids = values.ids?.split(',').map((s) => positiveInt(s.trim(), '--ids', Number.MAX_SAFE_INTEGER));
    if (ids !== undefined && (ids.length === 0 || ids.length > 100)) throw new UsageError('--ids takes 1 to 100 capture ids');
    const input = ids ? { ids } : { query: captureQueryOf(values, 100, Date.now()) };
    const doc = await callConsole(resolveDataDir(values['data-dir']), 'proxy.exportCaptures', input);
    const text = JSON.stringify(doc, null, 2);
    if (values.out) {
      // Bodies may hold what users typed: readable by this user only.
      writeFileSync(values.out, text + '\n', { mode: 0o600 });
      output.out(output.json ? JSON.stringify({ file: values.out, captures: doc.captures.length }) : `${doc.captures.length} captures written to ${values.out}`);
    } else output.out(output.json ? JSON.stringify(doc) : text);
    return EXIT.OK;
  },
};

export const captureCommands: CliCommand[] = [list, show, exportCmd];
