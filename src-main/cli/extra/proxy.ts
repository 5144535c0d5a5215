// `gpu-console tokens …`: client tokens of the local proxy, through the
// contract (`proxy.createToken`, `proxy.listTokens`, `proxy.revokeToken`): the
// running console takes a new or revoked token at once; with none running, a
// core started for the command writes them to the data dir's database. Either
// way the core audits every change, actor `operator:<user>@cli`.
import { parseArgs } from 'node:util';
import { TokenNameSchema, TrafficClassSchema } from '../../../src-preload/contract/index.js';
import { callConsole } from '../core-client.js';
import { resolveDataDir } from '../options.js';
import { EXIT, UsageError, shown, type Output } from '../output.js';
import type { CliCommand } from './types.js';

function parse(args: string[], withClass: boolean) {
  try {
    return parseArgs({
      args,
      options: {
        'data-dir': { type: 'string' },
        json: { type: 'boolean', default: false },
        ...(withClass ? { 'max-class': { type: 'string' } } : {}),
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

const create: CliCommand = {
  name: 'tokens create',
  help: `  tokens create NAME [--max-class interactive|system|batch]
                        Issue a proxy token (default class: interactive); prints the token alone.`,
  async run(args: string[], output: Output): Promise<number> {
    const { values, positionals } = parse(args, true);
    const usage = 'usage: gpu-console tokens create NAME [--max-class interactive|system|batch]';
    if (positionals.length !== 1) throw new UsageError(usage);
    const name = tokenName(positionals[0], usage);
    const rawClass = (values as { 'max-class'?: string })['max-class'] ?? 'interactive';
    const cls = TrafficClassSchema.safeParse(rawClass);
    if (!cls.success) throw new UsageError(`--max-class must be interactive, system or batch, got "${rawClass}"`);
    const created = await callConsole(resolveDataDir(values['data-dir']), 'proxy.createToken', { name, maxClass: cls.data });
    // The token alone on stdout, so `TOKEN=$(gpu-console tokens create app)` works.
    output.out(output.json ? JSON.stringify({ token: created.token, ...created.view }) : created.token);
    return EXIT.OK;
  },
};

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
            (t.lastUsedAt ? `  last used ${new Date(t.lastUsedAt).toISOString()}` : ''),
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

export const proxyCommands: CliCommand[] = [create, list, revoke];
