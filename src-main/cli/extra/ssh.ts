// `gpu-console` commands of the ssh capability: the ~/.ssh/config import
// (ssh-import.ts), and trust / refuse / reconnect / tunnel test through the
// running console.
import { parseArgs } from 'node:util';
import { AppError } from '../../core/base/index.js';
import { FleetErrorCode } from '../../core/fleet/index.js';
import { callRunningConsole } from '../bridge-client.js';
import { resolveDataDir } from '../options.js';
import { EXIT, UsageError, shown, type Output } from '../output.js';
import { importCommand } from './ssh-import.js';
import type { CliCommand } from './types.js';

const COMMON = { 'data-dir': { type: 'string' }, json: { type: 'boolean', default: false } } as const;

function parse<T extends Record<string, { type: 'string' | 'boolean'; default?: string | boolean }>>(args: string[], extra: T) {
  try {
    return parseArgs({ args, options: { ...COMMON, ...extra }, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message.replace(/\. To specify a positional argument.*$/s, ''));
  }
}

function consoleCommand(name: string, usage: string, help: string, arity: number, act: (dataDir: string, args: string[], output: Output) => Promise<void>): CliCommand {
  return {
    name,
    help,
    async run(args, output) {
      const { values, positionals } = parse(args, {});
      if (positionals.length !== arity) throw new UsageError(`usage: gpu-console ${usage}`);
      await act(resolveDataDir(values['data-dir']), positionals, output);
      return EXIT.OK;
    },
  };
}

const trustCommand = consoleCommand(
  'hosts trust',
  'hosts trust LABEL SHA256:FINGERPRINT',
  `  hosts trust LABEL FINGERPRINT
                        Confirm the host key the host waits on (compare it with the host first); audited.`,
  2,
  async (dataDir, [label, fingerprint], output) => {
    const r = await callRunningConsole(dataDir, 'hosts.trust', { label: label!, fingerprint: fingerprint! });
    output.out(output.json ? JSON.stringify(r) : `${shown(r.label)}: trusted ${shown(fingerprint)}; now ${r.state}`);
  },
);

const refuseCommand = consoleCommand(
  'hosts refuse',
  'hosts refuse LABEL SHA256:FINGERPRINT',
  `  hosts refuse LABEL FINGERPRINT
                        Refuse the host key the host waits on; the host stops; audited.`,
  2,
  async (dataDir, [label, fingerprint], output) => {
    const r = await callRunningConsole(dataDir, 'hosts.refuseTrust', { label: label!, fingerprint: fingerprint! });
    output.out(output.json ? JSON.stringify(r) : `${shown(r.label)}: refused ${shown(fingerprint)}; now ${r.state}`);
  },
);

const forgetCommand = consoleCommand(
  'hosts forget-key',
  'hosts forget-key LABEL SHA256:OLD-FINGERPRINT',
  `  hosts forget-key LABEL OLD-FINGERPRINT
                        After a reinstall (HOST KEY CHANGED against a key this console confirmed): forget
                        that old key, naming it; the host reconnects and waits for the new key's
                        confirmation (hosts trust). Keys in known_hosts are removed with ssh-keygen -R.`,
  2,
  async (dataDir, [label, fingerprint], output) => {
    const r = await callRunningConsole(dataDir, 'hosts.forgetTrust', { label: label!, fingerprint: fingerprint!, typedLabel: label! });
    output.out(output.json ? JSON.stringify(r) : `${shown(r.label)}: forgot ${shown(fingerprint)}; now ${r.state} (confirm the new key with: gpu-console hosts trust ${shown(r.label)} FINGERPRINT)`);
  },
);

const reconnectCommand = consoleCommand(
  'hosts reconnect',
  'hosts reconnect LABEL',
  `  hosts reconnect LABEL Drop the host's SSH link (or its pending retry) and connect at once.`,
  1,
  async (dataDir, [label], output) => {
    const r = await callRunningConsole(dataDir, 'hosts.reconnect', { label: label! });
    output.out(output.json ? JSON.stringify(r) : `${shown(r.label)}: ${r.state}`);
  },
);

const testCommand: CliCommand = {
  ...consoleCommand(
    'tunnels test',
    'tunnels test LABEL SERVICE',
    `  tunnels test LABEL SERVICE
                        GET /v1/models then a 1-token chat through the service's tunnel; audited.`,
    2,
    async (dataDir, [label, serviceId], output) => {
      const r = await callRunningConsole(dataDir, 'tunnels.test', { label: label!, serviceId: serviceId! });
      if (output.json) output.out(JSON.stringify(r));
      else {
        output.out(`${shown(label)}/${shown(serviceId)} ${shown(r.localUrl)}: ${r.ok ? 'OK' : 'FAILED'} in ${r.totalMs} ms`);
        // A step's detail quotes what the model server answered.
        for (const s of r.steps) output.out(`  ${s.name.padEnd(6)} ${s.ok ? 'ok  ' : 'FAIL'} ${s.status ?? '—'} ${s.latencyMs} ms  ${shown(s.detail)}`);
        if (r.error) output.out(`  ${r.error.code}: ${shown(r.error.message)}`);
      }
      if (!r.ok) throw r.error ? AppError.fromWire(r.error) : new AppError(FleetErrorCode.PROBE_FAILED, 'the tunnel test failed');
    },
  ),
};

export const sshCommands: CliCommand[] = [importCommand, trustCommand, refuseCommand, forgetCommand, reconnectCommand, testCommand];
