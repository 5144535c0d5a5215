// `gpu-console secrets …`: store upstream API keys and other secrets in the
// RUNNING console's secret store (the OS keychain in the desktop app, a 0600
// file headless). Values are read from standard input, never from the command
// line (shell history), and are never printed.
import { parseArgs } from 'node:util';
import { callRunningConsole } from '../bridge-client.js';
import { resolveDataDir } from '../options.js';
import { EXIT, UsageError, shown } from '../output.js';
import type { CliCommand } from './types.js';

function parse(args: string[]) {
  try {
    return parseArgs({ args, options: { 'data-dir': { type: 'string' }, json: { type: 'boolean', default: false } }, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message.replace(/\. To specify a positional argument.*$/s, ''));
  }
}

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write('value (end with Ctrl-D): ');
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

export const secretsCommands: CliCommand[] = [
  {
    name: 'secrets list',
    help: '  secrets list          Names of the stored secrets (never their values) and where they are kept.\n',
    async run(args, output) {
      const { values, positionals } = parse(args);
      if (positionals.length) throw new UsageError('usage: gpu-console secrets list');
      const r = await callRunningConsole(resolveDataDir(values['data-dir']), 'secrets.list', {});
      if (output.json) output.out(JSON.stringify(r));
      else {
        output.out(`kept in: ${r.kind}${r.persistent ? '' : ' (this session only)'}`);
        for (const n of r.names) output.out(`  ${shown(n)}`);
        if (r.names.length === 0) output.out('  (none)');
      }
      return EXIT.OK;
    },
  },
  {
    name: 'secrets set',
    help: '  secrets set NAME      Store a secret read from standard input (e.g. an upstream API key named by a\n                        service\'s apiKeyRef).\n',
    async run(args, output) {
      const { values, positionals } = parse(args);
      if (positionals.length !== 1) throw new UsageError('usage: gpu-console secrets set NAME   (the value is read from standard input)');
      const value = await readStdin();
      if (!value) throw new UsageError('no value on standard input');
      const r = await callRunningConsole(resolveDataDir(values['data-dir']), 'secrets.set', { name: positionals[0]!, value });
      if (output.json) output.out(JSON.stringify(r));
      else output.out(`${shown(r.name)}: ${shown(r.message)}`);
      return EXIT.OK;
    },
  },
  {
    name: 'secrets delete',
    help: '  secrets delete NAME   Remove a stored secret.\n',
    async run(args, output) {
      const { values, positionals } = parse(args);
      if (positionals.length !== 1) throw new UsageError('usage: gpu-console secrets delete NAME');
      const r = await callRunningConsole(resolveDataDir(values['data-dir']), 'secrets.delete', { name: positionals[0]! });
      if (output.json) output.out(JSON.stringify(r));
      else output.out(`${shown(r.name)}: deleted`);
      return EXIT.OK;
    },
  },
];
