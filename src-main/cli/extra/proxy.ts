// `gpu-console tokens …`: client tokens of the local proxy, through the
// contract (`proxy.createToken`, `proxy.setToken`, `proxy.listTokens`, `proxy.revokeToken`): the
// running console takes a new or revoked token at once; with none running, a
// core started for the command writes them to the data dir's database. Either
// way the core audits every change, actor `operator:<user>@cli`.
import { parseArgs } from 'node:util';
import { TokenNameSchema, TrafficClassSchema, type TokenView } from '../../../src-preload/contract/index.js';
import { callConsole } from '../core-client.js';
import { resolveDataDir } from '../options.js';
import { EXIT, UsageError, shown, type Output } from '../output.js';
import { CLEAR_OPTIONS, LIMIT_OPTIONS, LIMITS_HELP, limitsPatch } from './token-limits-args.js';
import type { CliCommand } from './types.js';

function parse(args: string[], withClass: boolean, limits: 'none' | 'create' | 'set' = 'none') {
  try {
    return parseArgs({
      args,
      options: {
        'data-dir': { type: 'string' },
        json: { type: 'boolean', default: false },
        ...(withClass ? { 'max-class': { type: 'string' } } : {}),
        ...(limits !== 'none' ? LIMIT_OPTIONS : {}),
        ...(limits === 'set' ? CLEAR_OPTIONS : {}),
      },
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    throw new UsageError((err as Error).message.replace(/\. To specify a positional argument.*$/s, ''));
  }
}

function tokenName(value: string | undefined, usage: string): string {
  if (!value) throw new UsageError(usage);
  const parsed = TokenNameSchema.safeParse(value);
  if (!parsed.success) throw new UsageError(`token name ${parsed.error.issues[0]?.message ?? 'is invalid'}`);
  return parsed.data;
}

function maxClass(raw: string | undefined) {
  if (raw === undefined) return undefined;
  const cls = TrafficClassSchema.safeParse(raw);
  if (!cls.success) throw new UsageError(`--max-class must be interactive, system or batch, got "${raw}"`);
  return cls.data;
}

const create: CliCommand = {
  name: 'tokens create',
  help: `  tokens create NAME [--max-class interactive|system|batch] ${LIMITS_HELP}
                        Issue a proxy token (default class: interactive; no limits unless given); prints the token alone.`,
  async run(args: string[], output: Output): Promise<number> {
    const { values, positionals } = parse(args, true, 'create');
    const usage = `usage: gpu-console tokens create NAME [--max-class interactive|system|batch] ${LIMITS_HELP}`;
    if (positionals.length !== 1) throw new UsageError(usage);
    const name = tokenName(positionals[0], usage);
    const cls = maxClass((values as { 'max-class'?: string })['max-class']) ?? 'interactive';
    const limits = limitsPatch(values, Date.now());
    const created = await callConsole(resolveDataDir(values['data-dir']), 'proxy.createToken', { name, maxClass: cls, limits });
    // The token alone on stdout, so `TOKEN=$(gpu-console tokens create app)` works.
    output.out(output.json ? JSON.stringify({ token: created.token, ...created.view }) : created.token);
    return EXIT.OK;
  },
};

const set: CliCommand = {
  name: 'tokens set',
  help: `  tokens set NAME [--max-class C] ${LIMITS_HELP}
             [--clear-models] [--no-rpm] [--no-tpm] [--no-budget] [--no-expiry]
                        Change a live token's class or limits (fields set in config proxy.clients are refused).`,
  async run(args: string[], output: Output): Promise<number> {
    const { values, positionals } = parse(args, true, 'set');
    const usage = `usage: gpu-console tokens set NAME [--max-class C] ${LIMITS_HELP} [--clear-models] [--no-rpm] [--no-tpm] [--no-budget] [--no-expiry]`;
    if (positionals.length !== 1) throw new UsageError(usage);
    const name = tokenName(positionals[0], usage);
    const cls = maxClass((values as { 'max-class'?: string })['max-class']);
    const limits = limitsPatch(values, Date.now());
    if (cls === undefined && Object.keys(limits).length === 0) throw new UsageError(`nothing to change; ${usage}`);
    const { view } = await callConsole(resolveDataDir(values['data-dir']), 'proxy.setToken', { name, ...(cls ? { maxClass: cls } : {}), limits });
    output.out(output.json ? JSON.stringify(view) : `${shown(view.name)}: ${describeLimits(view)}`);
    return EXIT.OK;
  },
};

/** One line: the limits in force, config-owned ones marked. */
function describeLimits(t: TokenView): string {
  const l = t.limits;
  const mark = (f: TokenView['configFields'][number], text: string) => (t.configFields.includes(f) ? `${text} (config)` : text);
  const parts = [
    `class ${t.maxClass}`,
    mark('models', l.models.length === 0 ? 'all models' : `models ${l.models.join(',')}`),
    l.rpm === null ? null : mark('rpm', `${l.rpm} rpm`),
    l.tpm === null ? null : mark('tpm', `${l.tpm} tpm`),
    l.budgetUsd === null ? null : mark('budgetUsd', `budget $${l.budgetUsd}/month (${l.budgetAction}${t.budget?.spentUsd != null ? `, spent ~$${t.budget.spentUsd.toFixed(2)}` : ''})`),
    l.expiresAt === null ? null : mark('expiresAt', `expires ${new Date(l.expiresAt).toISOString()}`),
  ];
  return parts.filter((p) => p !== null).join(', ');
}

const list: CliCommand = {
  name: 'tokens list',
  help: `  tokens list           Show proxy tokens (names, classes, prefixes; never the tokens).`,
  async run(args: string[], output: Output): Promise<number> {
    const { values, positionals } = parse(args, false);
    if (positionals.length !== 0) throw new UsageError('usage: gpu-console tokens list');
    const { tokens } = await callConsole(resolveDataDir(values['data-dir']), 'proxy.listTokens', {});
    if (output.json) output.out(JSON.stringify({ tokens }));
    else if (tokens.length === 0) output.out('no tokens (create one with: gpu-console tokens create NAME)');
    else {
      for (const t of tokens) {
        output.out(
          `${shown(t.name).padEnd(24)} ${t.maxClass.padEnd(12)} ${t.prefix}…  created ${new Date(t.createdAt).toISOString()}` +
            (t.revokedAt ? `  REVOKED ${new Date(t.revokedAt).toISOString()}` : '') +
            (t.lastUsedAt ? `  last used ${new Date(t.lastUsedAt).toISOString()}` : '') +
            `\n${' '.repeat(25)}${describeLimits(t)}`,
        );
      }
    }
    return EXIT.OK;
  },
};

const revoke: CliCommand = {
  name: 'tokens revoke',
  help: `  tokens revoke NAME    Revoke a proxy token at once (its clients get 401 token_revoked).`,
  async run(args: string[], output: Output): Promise<number> {
    const { values, positionals } = parse(args, false);
    const usage = 'usage: gpu-console tokens revoke NAME';
    if (positionals.length !== 1) throw new UsageError(usage);
    const name = tokenName(positionals[0], usage);
    const { view } = await callConsole(resolveDataDir(values['data-dir']), 'proxy.revokeToken', { name });
    output.out(output.json ? JSON.stringify(view) : `${shown(view.name)}: revoked`);
    return EXIT.OK;
  },
};

export const proxyCommands: CliCommand[] = [create, set, list, revoke];
