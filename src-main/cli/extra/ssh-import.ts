// `gpu-console hosts import-ssh-config`: reads the file the user names, in
// their own shell, with its Includes (as ssh does) and prints what it found;
// `--apply --yes` hands that text to the console's core (`hosts.importPreview`
// with its content, then `hosts.importApply`), which writes the config file,
// reloads it and audits it. Lines that make ssh run a command (ProxyCommand,
// Match exec, …) are printed as written with their hosts; a host they apply
// to is added only when named with --allow-command.
import { homedir, userInfo } from 'node:os';
import { basename, isAbsolute, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { SshConfigApplyResult } from '../../../src-preload/contract/index.js';
import { AppError, BaseErrorCode, escapeControls } from '../../core/base/index.js';
import { defaultConfigPath } from '../../core/config/index.js';
import { findRunningConsole } from '../../core/instance/index.js';
import {
  SshErrorCode,
  commandEffect,
  expandTilde,
  hostEntry,
  importSshConfig,
  loadSshConfigTree,
  mergeHostsIntoYaml,
  readConfigText,
  type SshConfigImport,
  type SshConfigLine,
} from '../../core/ssh/index.js';
import { callRunningConsole } from '../bridge-client.js';
import { withConsole } from '../core-client.js';
import { CliErrorCode } from '../errors.js';
import { resolveDataDir } from '../options.js';
import { EXIT, UsageError, type Output } from '../output.js';
import type { CliCommand } from './types.js';

const USAGE = 'usage: gpu-console hosts import-ssh-config [FILE] [--config FILE] [--apply --yes] [--allow-command LABEL]…';

const OPTIONS = {
  'data-dir': { type: 'string' },
  json: { type: 'boolean', default: false },
  config: { type: 'string' },
  apply: { type: 'boolean', default: false },
  yes: { type: 'boolean', default: false },
  'allow-command': { type: 'string', multiple: true },
} as const;

function parse(args: string[]) {
  try {
    return parseArgs({ args, options: OPTIONS, allowPositionals: true, strict: true });
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

/** `--allow-command a --allow-command b,c` → {a, b, c}; each must be a host of the file. */
function allowedLabels(values: readonly string[] | undefined, result: SshConfigImport): Set<string> {
  const labels = new Set((values ?? []).flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean));
  const unknown = [...labels].filter((l) => !result.hosts.some((h) => h.label === l));
  if (unknown.length > 0) throw new UsageError(`--allow-command names no host of the file: ${unknown.map((u) => escapeControls(u)).join(', ')}`);
  return labels;
}

interface Held {
  label: string;
  /** `ProxyCommand line 5`, … */
  lines: string[];
}

/** The hosts being added that command lines apply to and that --allow-command did not name, each with its lines. */
function unacknowledged(
  hosts: readonly { label: string; commands: readonly string[] }[],
  commands: readonly { id: string; directive: string; line: number }[],
  adding: readonly string[],
  allowed: ReadonlySet<string>,
): Held[] {
  return hosts
    .filter((h) => adding.includes(h.label) && h.commands.length > 0 && !allowed.has(h.label))
    .map((h) => ({ label: h.label, lines: h.commands.map((id) => commands.find((c) => c.id === id)).map((c, i) => (c ? `${c.directive} line ${c.line}` : h.commands[i]!)) }));
}

function refuseUnacknowledged(held: readonly Held[]): never {
  const list = held.map((h) => (h.lines.length > 0 ? `${h.label} (${h.lines.join(', ')})` : h.label)).join('; ');
  throw new UsageError(
    `nothing written: ssh would run commands from the file for ${list}. Read those lines above; to add these hosts anyway, repeat with --allow-command LABEL for each (e.g. --allow-command ${held[0]?.label ?? 'LABEL'})`,
  );
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
  allowed: ReadonlySet<string>,
): Promise<{ result: SshConfigApplyResult; running: boolean }> {
  return withConsole(dataDir, { configFile: configFlag }, async ({ call, running }) => {
    const text = lines.map((l) => l.text).join('\n');
    // ~/.ssh/config is read by the console itself (so hosts that need OpenSSH keep their alias and file);
    // any other file goes as content: the bridge takes no paths.
    const preview = await call('hosts.importPreview', {
      source: source === join(homedir(), '.ssh', 'config') ? { kind: 'default' } : { kind: 'content', name: source.length <= 255 ? source : basename(source).slice(0, 255), text },
    });
    if (!preview) throw new AppError(BaseErrorCode.INTERNAL_ASSERTION, 'hosts.importPreview answered no preview for content');
    if (running && configFlag !== null && resolve(preview.configFile) !== configFlag) {
      throw new AppError(
        CliErrorCode.CONFIG_FILE_MISMATCH,
        `the console running on ${dataDir} keeps its hosts in ${preview.configFile}: import without --config, or stop that console to import into ${configFlag}`,
        { details: { consoleConfigFile: preview.configFile, configFile: configFlag } },
      );
    }
    const adding = preview.hosts.filter((h) => !h.exists).map((h) => h.label);
    const held = unacknowledged(preview.hosts, preview.commands, adding, allowed);
    if (held.length > 0) refuseUnacknowledged(held);
    if (preview.hosts.length === 0) return { running, result: { configFile: preview.configFile, added: [], skipped: [], reloaded: false, note: null } };
    const acknowledgedCommands = [...new Set(preview.hosts.filter((h) => allowed.has(h.label)).flatMap((h) => h.commands))];
    const result = await call('hosts.importApply', { previewId: preview.previewId, labels: preview.hosts.map((h) => h.label), acknowledgedCommands }).catch((err: unknown) => {
      // The console found a line this CLI's own reading did not (the file changed in between): same refusal.
      if (err instanceof AppError && err.code === SshErrorCode.IMPORT_COMMAND_NOT_ACKNOWLEDGED) {
        refuseUnacknowledged(((err.details['hosts'] as string[] | undefined) ?? []).map((label) => ({ label, lines: [] })));
      }
      throw err;
    });
    return { running, result };
  });
}

/** The human listing: hosts, refused hosts, the command lines with what they do, then every other issue. */
function printListing(output: Output, source: string, result: SshConfigImport, uploaded: boolean): void {
  output.out(`${source}: ${result.hosts.length} host(s)`);
  for (const h of result.hosts) {
    output.out(`  ${h.label.padEnd(20)} ${h.user}@${h.host}:${h.port}${h.jumpHost ? ` via ${h.jumpHost}` : ''}  ${h.identityFile ? `key ${escapeControls(h.identityFile)}` : 'ssh-agent'}`);
    for (const n of h.notes) output.out(`      note: ${escapeControls(n)}`);
  }
  for (const s of result.skipped) output.out(`  refused ${s.alias}: ${escapeControls(s.reason)}`);
  if (result.commands.length > 0) {
    output.out('Lines that make ssh run a command on this computer (a host they apply to is added only with --allow-command LABEL):');
    for (const c of result.commands) {
      const hosts = result.hosts.filter((h) => c.aliases.includes(h.alias));
      const readBy = uploaded ? [] : hosts.filter((h) => h.configHost !== null).map((h) => h.label);
      output.out(`  ${c.file ? `${c.file} ` : ''}line ${c.line}: ${c.directive} ${c.text}`);
      output.out(`      for ${hosts.map((h) => h.label).join(', ')}: ${commandEffect(c, readBy, uploaded)}`);
    }
  }
  for (const i of result.issues) output.out(`  ${i.file ? `${i.file} ` : ''}line ${i.line}: ${i.severity}: ${escapeControls(i.message)}`);
}

interface Applied {
  merged: { added: string[]; skipped: { alias: string; reason: string }[] } | null;
  reloaded: boolean | null;
  note: string | null;
  configFile: string;
}

function printOutcome(output: Output, values: { apply: boolean; yes: boolean }, a: Applied): void {
  if (!values.apply) output.out(`Nothing written. To add them to ${a.configFile}: --apply --yes`);
  else if (a.merged) {
    for (const s of a.merged.skipped) output.out(`  not added ${s.alias}: ${s.reason}`);
    if (!values.yes) output.out(`Would add ${a.merged.added.join(', ') || 'nothing'} to ${a.configFile}. Confirm with --yes.`);
    else if (a.merged.added.length === 0) output.out(`Nothing new to add to ${a.configFile}.`);
    else
      output.out(
        `Added ${a.merged.added.join(', ')} to ${a.configFile}` +
          (a.reloaded === true ? '; the running console reloaded it.' : a.reloaded === false ? `; the running console did not load it (${a.note ?? 'see config check'}).` : '.'),
      );
  }
}

export const importCommand: CliCommand = {
  name: 'hosts import-ssh-config',
  help: `  hosts import-ssh-config [FILE] [--config FILE] [--apply --yes] [--allow-command LABEL]…
                        Read hosts from an OpenSSH client config (default ~/.ssh/config): Host, HostName,
                        User, Port, IdentityFile, ProxyJump, wildcard defaults, Includes. Prints them, the
                        hosts refused (a HostName, User, ProxyJump or path that is not a plain value), the
                        lines that make ssh run a command (ProxyCommand, Match exec, LocalCommand, …) and
                        every directive it did not import. --apply --yes has the console (the running one,
                        else one started for the command) add the new ones to its config file (default
                        <data dir>/config.yaml, or --config FILE when none runs), reload it and audit it; a
                        host such a line applies to is added only when named with --allow-command LABEL
                        (repeat it, or list labels with commas); otherwise nothing is written.`,
  async run(args, output) {
    const { values, positionals } = parse(args);
    if (positionals.length > 1) throw new UsageError(USAGE);
    const home = homedir();
    const source = positionals[0] ? resolve(expandTilde(positionals[0], home)) : join(home, '.ssh', 'config');
    const dataDir = resolveDataDir(values['data-dir']);
    const configFlag = values.config ? resolve(values.config) : null;
    // The CLI user names the file in their own shell; its Includes are followed as ssh does.
    const loaded = await loadSshConfigTree(source, home);
    const result = importSshConfig(loaded.lines, { home, localUser: localUser() }, loaded.issues);
    const allowed = allowedLabels(values['allow-command'], result);
    // Only ~/.ssh/config is read by the console from disk; any other file reaches it as content, not kept.
    const uploaded = source !== join(home, '.ssh', 'config');
    const applied: Applied = { merged: null, reloaded: null, note: null, configFile: configFlag ?? (await consoleConfigFile(dataDir)) };
    if (values.apply && !values.yes) {
      // A dry run: what the apply would add, read here, nothing written.
      const m = mergeHostsIntoYaml(await readConfigText(applied.configFile), result.hosts, { file: applied.configFile, home, sshConfigFile: isAbsolute(source) ? source : null });
      applied.merged = { added: m.added, skipped: m.skipped };
      const held = unacknowledged(result.hosts, result.commands, m.added, allowed);
      for (const h of held) applied.merged.skipped.push({ alias: h.label, reason: `ssh would run commands from the file for it (${h.lines.join(', ')}): --apply --yes refuses it without --allow-command ${h.label}` });
    } else if (values.apply) {
      const done = await applyThroughConsole(dataDir, source, loaded.lines, configFlag, allowed);
      applied.configFile = done.result.configFile;
      applied.merged = { added: done.result.added, skipped: done.result.skipped };
      // A core started for this command loaded the file itself; only a running console's reload is news.
      if (done.running && applied.merged.added.length > 0) {
        applied.reloaded = done.result.reloaded;
        applied.note = done.result.note;
      }
    }
    if (output.json) {
      const hosts = result.hosts.map((h) => ({ ...h, yaml: hostEntry(h, isAbsolute(source) ? source : null) }));
      output.out(JSON.stringify({ source, configFile: applied.configFile, ...result, hosts, applied: applied.merged && values.yes ? applied.merged : null, reloaded: applied.reloaded }));
    } else {
      printListing(output, source, result, uploaded);
      printOutcome(output, values, applied);
    }
    return EXIT.OK;
  },
};
