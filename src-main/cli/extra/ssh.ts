// `gpu-console` commands of the ssh capability: the ~/.ssh/config import, and
// trust / refuse / reconnect / tunnel test through the running console. The
// import reads the file the user names, in their own shell, with its Includes
// (as ssh does) and prints what it found; `--apply --yes` hands that text to
// the console's core (`hosts.importPreview` with its content, then
// `hosts.importApply`), which writes the config file, reloads it and audits it.
import { homedir, userInfo } from 'node:os';
import { basename, isAbsolute, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { SshConfigApplyResult } from '../../../src-preload/contract/index.js';
import { AppError } from '../../core/base/index.js';
import { defaultConfigPath } from '../../core/config/index.js';
import { findRunningConsole } from '../../core/instance/index.js';
import { expandTilde, hostEntry, importSshConfig, loadSshConfigTree, mergeHostsIntoYaml, readConfigText, type SshConfigLine } from '../../core/ssh/index.js';
import { callRunningConsole } from '../bridge-client.js';
import { withConsole } from '../core-client.js';
import { resolveDataDir } from '../options.js';
import { EXIT, UsageError, type Output } from '../output.js';
import type { CliCommand } from './types.js';

const COMMON = { 'data-dir': { type: 'string' }, json: { type: 'boolean', default: false } } as const;

function parse<T extends Record<string, { type: 'string' | 'boolean'; default?: string | boolean }>>(args: string[], extra: T) {
  try {
    return parseArgs({ args, options: { ...COMMON, ...extra }, allowPositionals: true, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message.replace(/\. To specify a positional argument.*$/s, ''));
  }
}

function localUser(): string {
  try {
    return userInfo().username;
  } catch {
    return 'root';
  }
}

/** The config file a running console's import writes (its own), else the data dir's default. */
async function consoleConfigFile(dataDir: string): Promise<string> {
  if (!findRunningConsole(dataDir)) return defaultConfigPath(dataDir);
  const info = await callRunningConsole(dataDir, 'app.info', {}).catch(() => null);
  return info?.configFile ?? defaultConfigPath(dataDir);
}

/**
 * The write, through the contract: the text read here (Includes already inlined where they stand, so the core
 * parses exactly what was printed) as a preview's content, then an apply of all its hosts.
 */
async function applyThroughConsole(
  dataDir: string,
  source: string,
  lines: readonly SshConfigLine[],
  configFlag: string | null,
): Promise<{ result: SshConfigApplyResult; running: boolean }> {
  return withConsole(dataDir, { configFile: configFlag }, async ({ call, running }) => {
    const text = lines.map((l) => l.text).join('\n');
    // ~/.ssh/config is read by the console itself (so hosts that need OpenSSH keep their alias and file);
    // any other file goes as content: the bridge takes no paths.
    const preview = await call('hosts.importPreview', {
      source: source === join(homedir(), '.ssh', 'config') ? { kind: 'default' } : { kind: 'content', name: source.length <= 255 ? source : basename(source).slice(0, 255), text },
    });
    if (!preview) throw new AppError('INTERNAL_ASSERTION', 'hosts.importPreview answered no preview for content');
    if (running && configFlag !== null && resolve(preview.configFile) !== configFlag) {
      throw new AppError(
        'CLI_CONFIG_FILE_MISMATCH',
        `the console running on ${dataDir} keeps its hosts in ${preview.configFile}: import without --config, or stop that console to import into ${configFlag}`,
        { details: { consoleConfigFile: preview.configFile, configFile: configFlag } },
      );
    }
    if (preview.hosts.length === 0) return { running, result: { configFile: preview.configFile, added: [], skipped: [], reloaded: false, note: null } };
    const result = await call('hosts.importApply', { previewId: preview.previewId, labels: preview.hosts.map((h) => h.label) });
    return { running, result };
  });
}

const importCommand: CliCommand = {
  name: 'hosts import-ssh-config',
  help: `  hosts import-ssh-config [FILE] [--config FILE] [--apply --yes]
                        Read hosts from an OpenSSH client config (default ~/.ssh/config): Host, HostName,
                        User, Port, IdentityFile, ProxyJump (one hop), wildcard defaults, Includes. Prints them and
                        every directive it did not import. --apply --yes has the console (the running one, else
                        one started for the command) add the new ones to its config file (default <data dir>/
                        config.yaml, or --config FILE when none runs), reload it and audit it.`,
  async run(args, output) {
    const { values, positionals } = parse(args, { config: { type: 'string' }, apply: { type: 'boolean', default: false }, yes: { type: 'boolean', default: false } });
    if (positionals.length > 1) throw new UsageError('usage: gpu-console hosts import-ssh-config [FILE] [--config FILE] [--apply --yes]');
    const home = homedir();
    const source = positionals[0] ? resolve(expandTilde(positionals[0], home)) : join(home, '.ssh', 'config');
    const dataDir = resolveDataDir(values['data-dir']);
    const configFlag = values.config ? resolve(values.config) : null;
    // The CLI user names the file in their own shell; its Includes are followed as ssh does.
    const loaded = await loadSshConfigTree(source, home);
    const result = importSshConfig(loaded.lines, { home, localUser: localUser() }, loaded.issues);
    let configFile = configFlag ?? (await consoleConfigFile(dataDir));

    let merged: { added: string[]; skipped: { alias: string; reason: string }[] } | null = null;
    let reloaded: boolean | null = null;
    let note: string | null = null;
    if (values.apply && !values.yes) {
      // A dry run: what the apply would add, read here, nothing written.
      const m = mergeHostsIntoYaml(await readConfigText(configFile), result.hosts, { file: configFile, home, sshConfigFile: isAbsolute(source) ? source : null });
      merged = { added: m.added, skipped: m.skipped };
    } else if (values.apply) {
      const applied = await applyThroughConsole(dataDir, source, loaded.lines, configFlag);
      configFile = applied.result.configFile;
      merged = { added: applied.result.added, skipped: applied.result.skipped };
      // A core started for this command loaded the file itself; only a running console's reload is news.
      if (applied.running && merged.added.length > 0) {
        reloaded = applied.result.reloaded;
        note = applied.result.note;
      }
    }

    if (output.json) {
      output.out(JSON.stringify({ source, configFile, ...result, hosts: result.hosts.map((h) => ({ ...h, yaml: hostEntry(h, isAbsolute(source) ? source : null) })), applied: merged && values.yes ? merged : null, reloaded }));
    } else {
      output.out(`${source}: ${result.hosts.length} host(s)`);
      for (const h of result.hosts) {
        output.out(
          `  ${h.label.padEnd(20)} ${h.user}@${h.host}:${h.port}${h.jumpHost ? ` via ${h.jumpHost}` : ''}  ${h.identityFile ? `key ${h.identityFile}` : 'ssh-agent'}`,
        );
        for (const n of h.notes) output.out(`      note: ${n}`);
      }
      for (const s of result.skipped) output.out(`  skipped ${s.alias}: ${s.reason}`);
      for (const i of result.issues) output.out(`  ${i.file ? `${i.file} ` : ''}line ${i.line}: ${i.severity}: ${i.message}`);
      if (!values.apply) output.out(`Nothing written. To add them to ${configFile}: --apply --yes`);
      else if (merged) {
        for (const s of merged.skipped) output.out(`  not added ${s.alias}: ${s.reason}`);
        if (!values.yes) output.out(`Would add ${merged.added.join(', ') || 'nothing'} to ${configFile}. Confirm with --yes.`);
        else if (merged.added.length === 0) output.out(`Nothing new to add to ${configFile}.`);
        else
          output.out(
            `Added ${merged.added.join(', ')} to ${configFile}` +
              (reloaded === true ? '; the running console reloaded it.' : reloaded === false ? `; the running console did not load it (${note ?? 'see config check'}).` : '.'),
          );
      }
    }
    return EXIT.OK;
  },
};

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
    output.out(output.json ? JSON.stringify(r) : `${r.label}: trusted ${fingerprint}; now ${r.state}`);
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
    output.out(output.json ? JSON.stringify(r) : `${r.label}: refused ${fingerprint}; now ${r.state}`);
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
    output.out(output.json ? JSON.stringify(r) : `${r.label}: forgot ${fingerprint}; now ${r.state} (confirm the new key with: gpu-console hosts trust ${r.label} FINGERPRINT)`);
  },
);

const reconnectCommand = consoleCommand(
  'hosts reconnect',
  'hosts reconnect LABEL',
  `  hosts reconnect LABEL Drop the host's SSH link (or its pending retry) and connect at once.`,
  1,
  async (dataDir, [label], output) => {
    const r = await callRunningConsole(dataDir, 'hosts.reconnect', { label: label! });
    output.out(output.json ? JSON.stringify(r) : `${r.label}: ${r.state}`);
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
        output.out(`${label}/${serviceId} ${r.localUrl ?? ''}: ${r.ok ? 'OK' : 'FAILED'} in ${r.totalMs} ms`);
        for (const s of r.steps) output.out(`  ${s.name.padEnd(6)} ${s.ok ? 'ok  ' : 'FAIL'} ${s.status ?? '—'} ${s.latencyMs} ms  ${s.detail}`);
        if (r.error) output.out(`  ${r.error.code}: ${r.error.message}`);
      }
      if (!r.ok) throw new AppError(r.error?.code ?? 'FLEET_PROBE_FAILED', r.error?.message ?? 'the tunnel test failed');
    },
  ),
};

export const sshCommands: CliCommand[] = [importCommand, trustCommand, refuseCommand, forgetCommand, reconnectCommand, testCommand];
