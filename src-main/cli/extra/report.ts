// `gpu-console report …`: evidence reports.
//   report build   — asks the RUNNING console (its web bridge) to build, render,
//                    digest and optionally sign an export; prints the folder and
//                    the file digests. Scriptable and repeatable.
//   report verify  — checks an export folder's digests and SSHSIG signature
//                    (standalone, files only) and, given a console's data dir or
//                    database, that the audit rows it covers still hash to the
//                    recorded head (`reports.verify`, through the contract).
//   report list    — past exports (`reports.list`: the running console, else a
//                    core started for the command on the data dir).
import { existsSync } from 'node:fs';
import { copyFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  REPORT_SECTIONS,
  ReportFormatSchema,
  ReportSectionSchema,
  type ReportExport,
  type ReportFormat,
  type ReportSection,
  type ReportVerifyResult,
} from '../../../src-preload/contract/index.js';
import { isAppError } from '../../core/base/index.js';
import { verifyExport } from '../../core/report/index.js';
import { readKeyFile } from '../../core/ssh/index.js';
import { callRunningConsole } from '../bridge-client.js';
import { DB_NAME, callConsole } from '../core-client.js';
import { resolveDataDir } from '../options.js';
import { EXIT, UsageError, shown, type Output } from '../output.js';
import type { CliCommand } from './types.js';

function parse(args: string[], extra: Record<string, { type: 'string' | 'boolean' }> = {}) {
  try {
    return parseArgs({ args, options: { 'data-dir': { type: 'string' }, json: { type: 'boolean', default: false }, ...extra }, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message.replace(/\. To specify a positional argument.*$/s, ''));
  }
}

const UNIT_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `24h`, `7d`, `90m` (before now), an ISO 8601 time, or ms since the epoch. */
export function parseTime(flag: string, value: string, now: number): number {
  const rel = /^(\d{1,6})([mhd])$/.exec(value);
  if (rel) return now - Number(rel[1]) * UNIT_MS[rel[2]!]!;
  if (/^\d{10,14}$/.test(value)) return Number(value);
  const t = Date.parse(value);
  if (Number.isNaN(t) || !/^\d{4}-\d{2}-\d{2}/.test(value)) {
    throw new UsageError(`${flag} must be a duration before now (30m, 24h, 7d), an ISO time (2026-11-30T08:00:00Z) or ms since the epoch; got "${value}"`);
  }
  return t;
}

function list<T>(flag: string, value: string, schema: { safeParse(v: unknown): { success: boolean; data?: T } }, allowed: readonly string[]): T[] {
  const out: T[] = [];
  for (const part of value.split(',').map((s) => s.trim()).filter(Boolean)) {
    const r = schema.safeParse(part);
    if (!r.success) throw new UsageError(`${flag}: "${part}" is not one of ${allowed.join(', ')}`);
    out.push(r.data as T);
  }
  if (!out.length) throw new UsageError(`${flag} needs at least one value`);
  return out;
}

function printExport(r: ReportExport, output: Output): void {
  output.out(`export ${r.id}: ${shown(r.dir)}`);
  for (const f of r.files) output.out(`  ${f.sha256}  ${shown(f.name)}  (${f.sizeBytes} bytes)`);
  output.out(`  manifest.json sha256 ${r.manifestSha256}`);
  output.out(r.signer ? `  signed by ${shown(r.signer)} (manifest.json.sig; check: ssh-keygen -Y verify -f allowed_signers -I <principal> -n gpu-console-evidence -s manifest.json.sig < manifest.json)` : '  not signed');
  output.out(`  gates: ${r.gates.pass} pass, ${r.gates.fail} fail, ${r.gates.pending} pending, ${r.gates.unverified} unverified`);
}

const BUILD_USAGE =
  'usage: gpu-console report build [--hosts A,B] [--since 24h|ISO] [--until ISO] [--format md,html,json,pdf] [--sections LIST] [--sign KEY [--passphrase-file F] | --sign-agent [--agent-key FP]] [--out DIR] [--title T] [--no-live] [--include-logs] [--strict]';

const build: CliCommand = {
  name: 'report build',
  help: `  report build [--hosts A,B] [--since 24h] [--until ISO] [--format md,html,json,pdf] [--sign KEY] [--out DIR]
                        Build an evidence report on the running console (live checks over SSH, the
                        store's records for the window; default the last 24 h, all hosts, md+html+json)
                        into a new folder with manifest.json (SHA-256 of every file). --sign KEY signs
                        it (SSHSIG, ssh-keygen -Y verify); an encrypted key reads its passphrase from
                        --passphrase-file or GPU_CONSOLE_SIGN_PASSPHRASE. --sign-agent signs with a key in
                        the console's ssh-agent (--agent-key SHA256:… or a comment word picks one). --sections picks from
                        ${REPORT_SECTIONS.join(',')}. --include-logs adds each service's log lines around every
                        lifecycle action in the window (masked, 200 per action); without it no log text
                        is in the report. --strict exits 1 when a gate fails.`,
  async run(args, output) {
    const { values, positionals } = parse(args, {
      hosts: { type: 'string' },
      since: { type: 'string' },
      until: { type: 'string' },
      format: { type: 'string' },
      sections: { type: 'string' },
      sign: { type: 'string' },
      'sign-agent': { type: 'boolean' },
      'agent-key': { type: 'string' },
      'passphrase-file': { type: 'string' },
      out: { type: 'string' },
      title: { type: 'string' },
      'no-live': { type: 'boolean' },
      'include-logs': { type: 'boolean' },
      strict: { type: 'boolean' },
    });
    const v = values as Record<string, string | boolean | undefined>;
    if (positionals.length) throw new UsageError(BUILD_USAGE);
    const now = Date.now();
    const fromMs = parseTime('--since', typeof v.since === 'string' ? v.since : '24h', now);
    const toMs = typeof v.until === 'string' ? parseTime('--until', v.until, now) : now;
    if (!(fromMs < toMs)) throw new UsageError('--since must be before --until');
    const formats = typeof v.format === 'string' ? list<ReportFormat>('--format', v.format, ReportFormatSchema, ReportFormatSchema.options) : (['md', 'html', 'json'] as ReportFormat[]);
    const sections = typeof v.sections === 'string' ? list<ReportSection>('--sections', v.sections, ReportSectionSchema, REPORT_SECTIONS) : [...REPORT_SECTIONS];
    const hosts = typeof v.hosts === 'string' ? v.hosts.split(',').map((h) => h.trim()).filter(Boolean) : [];
    let sign: { keyFile: string; passphrase?: string } | { agent: true; key?: string } | null = null;
    if (v['sign-agent'] && typeof v.sign === 'string') throw new UsageError('give either --sign KEY or --sign-agent, not both');
    if (typeof v['agent-key'] === 'string' && !v['sign-agent']) throw new UsageError('--agent-key needs --sign-agent');
    if (v['sign-agent']) {
      sign = { agent: true, ...(typeof v['agent-key'] === 'string' ? { key: v['agent-key'] } : {}) };
    } else if (typeof v.sign === 'string') {
      let passphrase: string | undefined = process.env.GPU_CONSOLE_SIGN_PASSPHRASE;
      if (typeof v['passphrase-file'] === 'string') {
        try {
          // Read as a key file is: a regular file, 64 KiB at most (a FIFO or /dev/zero named by mistake is refused).
          passphrase = (await readKeyFile(v['passphrase-file'], '--passphrase-file')).toString('utf8').replace(/\r?\n$/, '');
        } catch (err) {
          const reason = isAppError(err) && typeof err.details['reason'] === 'string' ? err.details['reason'] : (err as Error).message;
          throw new UsageError(`cannot read --passphrase-file ${v['passphrase-file']}: ${reason}`);
        }
      }
      sign = { keyFile: v.sign, ...(passphrase ? { passphrase } : {}) };
    } else if (typeof v['passphrase-file'] === 'string') {
      throw new UsageError('--passphrase-file needs --sign KEY');
    }
    const r = await callRunningConsole(
      resolveDataDir(typeof v['data-dir'] === 'string' ? v['data-dir'] : undefined),
      'reports.export',
      {
        request: { hosts, fromMs, toMs, sections, live: !v['no-live'], includeLogs: v['include-logs'] === true, ...(typeof v.title === 'string' ? { title: v.title } : {}) },
        formats,
        sign,
        ...(typeof v.out === 'string' ? { outDir: v.out } : {}),
      },
      { timeoutMs: 10 * 60_000 },
    );
    if (output.json) output.out(JSON.stringify(r));
    else printExport(r, output);
    return v.strict && r.gates.fail > 0 ? EXIT.FAILED : EXIT.OK;
  },
};

/** Which console's audit rows an export is checked against: a data dir, or a database file of its own. */
type AuditSource = { dataDir: string } | { dbFile: string };

/**
 * `reports.verify` against a database file outside a data dir (a backup, a copy): a core started on a
 * private copy of it answers, so the file itself is never opened, let alone migrated.
 */
async function verifyOnCopy(dbFile: string, dir: string): Promise<ReportVerifyResult> {
  const dataDir = await mkdtemp(join(tmpdir(), 'gpu-console-verify-'));
  try {
    await copyFile(dbFile, join(dataDir, DB_NAME));
    if (existsSync(`${dbFile}-wal`)) await copyFile(`${dbFile}-wal`, join(dataDir, `${DB_NAME}-wal`));
    return await callConsole(dataDir, 'reports.verify', { dir }, { requireDatabase: true });
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

async function verifyWithAudit(path: string, source: AuditSource, signature: { allowedSigners?: string; requireSignature: boolean }): Promise<ReportVerifyResult> {
  const dir = resolve(path);
  // A data dir's own database is checked by its console (running, or started for the command).
  let checked: ReportVerifyResult;
  if ('dataDir' in source) checked = await callConsole(source.dataDir, 'reports.verify', { dir }, { requireDatabase: true });
  else if (basename(source.dbFile) === DB_NAME) checked = await callConsole(dirname(resolve(source.dbFile)), 'reports.verify', { dir }, { requireDatabase: true });
  else checked = await verifyOnCopy(source.dbFile, dir);
  if (signature.allowedSigners === undefined && !signature.requireSignature) return checked;
  // `reports.verify` takes no allowed_signers nor a signature requirement: the files and the signature
  // are checked here (files only, no database), the audit rows by the core.
  const files = await verifyExport(dir, signature);
  const audit = checked.findings.filter((f) => f.check === 'audit');
  return { ...files, ok: files.ok && audit.every((f) => f.ok), auditChecked: checked.auditChecked, findings: [...files.findings, ...audit] };
}

const verify: CliCommand = {
  name: 'report verify',
  help: `  report verify PATH [--db FILE | --data-dir DIR] [--allowed-signers FILE] [--require-signature]
                        Check an export (its folder or any file in it): every file's SHA-256, the
                        signature (an unsigned export fails only with --require-signature), and —
                        with the console's data dir or database — that the audit rows it covers still
                        hash to the recorded head. Exits 1 when anything does not check out.`,
  async run(args, output) {
    const { values, positionals } = parse(args, { db: { type: 'string' }, 'allowed-signers': { type: 'string' }, 'require-signature': { type: 'boolean' } });
    const v = values as Record<string, string | boolean | undefined>;
    if (positionals.length !== 1) throw new UsageError('usage: gpu-console report verify PATH [--db FILE | --data-dir DIR] [--allowed-signers FILE] [--require-signature]');
    let source: AuditSource | null = null;
    if (typeof v.db === 'string') {
      if (!existsSync(v.db)) throw new UsageError(`no database at ${v.db}`);
      source = { dbFile: v.db };
    } else if (typeof v['data-dir'] === 'string') {
      const dataDir = resolveDataDir(v['data-dir']);
      if (!existsSync(join(dataDir, DB_NAME))) throw new UsageError(`no database at ${join(dataDir, DB_NAME)}`);
      source = { dataDir };
    }
    let allowedSigners: string | undefined;
    if (typeof v['allowed-signers'] === 'string') {
      try {
        allowedSigners = await readFile(v['allowed-signers'], 'utf8');
      } catch (err) {
        throw new UsageError(`cannot read --allowed-signers ${v['allowed-signers']}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
      }
    }
    const signature = { requireSignature: v['require-signature'] === true, ...(allowedSigners !== undefined ? { allowedSigners } : {}) };
    // Without a database the check reads the export's files only, here.
    const result = source ? await verifyWithAudit(positionals[0]!, source, signature) : await verifyExport(positionals[0]!, signature);
    if (output.json) output.out(JSON.stringify(result));
    else {
      // An export folder is anyone's files: its names and what was found in them are shown, not obeyed.
      output.out(`${result.ok ? 'OK' : 'FAILED'}: ${shown(result.dir)}`);
      for (const f of result.findings) output.out(`  ${f.ok ? 'ok  ' : 'FAIL'}  ${shown(f.check)}: ${shown(f.detail)}`);
      if (!result.auditChecked) output.out('  (audit rows not checked: give --db FILE or --data-dir DIR)');
    }
    return result.ok ? EXIT.OK : EXIT.FAILED;
  },
};

const listCmd: CliCommand = {
  name: 'report list',
  help: `  report list           Past exports (folder, signer): of the running console, else from the data dir.`,
  async run(args, output) {
    const { values, positionals } = parse(args);
    if (positionals.length) throw new UsageError('usage: gpu-console report list');
    const r = await callConsole(resolveDataDir(values['data-dir']), 'reports.list', { limit: 50 }, { requireDatabase: true });
    if (output.json) output.out(JSON.stringify(r));
    else if (r.exports.length === 0) output.out('no exports');
    else for (const e of r.exports) output.out(`${new Date(e.createdAt).toISOString()}  ${e.id}  ${e.signer ? shown(e.signer) : 'unsigned'}  ${shown(e.dir)}`);
    return EXIT.OK;
  },
};

export const reportCommands: CliCommand[] = [build, verify, listCmd];
