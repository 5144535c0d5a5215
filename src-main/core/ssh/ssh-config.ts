// Reads an OpenSSH client config (`~/.ssh/config`) into inventory hosts:
// Host (with wildcard and negated patterns as defaults), HostName, User, Port,
// IdentityFile, ProxyJump (hops resolved through the file's own aliases), plus
// UserKnownHostsFile and ServerAliveInterval. A host that needs what only
// OpenSSH reads (ProxyCommand, CertificateFile, IdentityAgent, several hops,
// Match blocks) keeps its alias, for the openssh transport to connect to as
// written. OpenSSH's rule holds: the first value obtained for a
// directive wins. Everything else is reported, never fatal. A line that is not
// `Keyword value` is reported by file and number only: its text is never
// echoed (the preview must not become a way to read a file). What the file
// says is data: a host whose HostName, User, ProxyJump, alias or paths are not
// of the config's grammar is refused by name, field and line; the lines that
// make ssh run a command are listed with their hosts (ssh-config-commands.ts),
// never run or evaluated here.
import { aliasProblem, hostProblem, parseJumpHop, pathProblem, userProblem } from '../config/index.js';
import { escapeControls } from '../base/index.js';
import { hostMatches } from './known-hosts.js';
import type { CommandDirective, CommandLine } from './ssh-config-commands.js';
import {
  OPENSSH_ONLY,
  effective,
  inlineUnfollowedIncludes,
  isConcrete,
  parse,
  splitConfigLines,
  type Block,
  type Directive,
  type SshConfigIssue,
  type SshConfigLine,
} from './ssh-config-parse.js';

export { directiveOf, splitConfigLines, type SshConfigIssue, type SshConfigLine } from './ssh-config-parse.js';

export interface ImportedHost {
  /** The `Host` alias it came from. */
  alias: string;
  /** Inventory label (the alias, with characters a label may not hold replaced). */
  label: string;
  host: string;
  port: number;
  user: string;
  identityFile: string | null;
  agent: boolean;
  jumpHost: string | null;
  knownHostsFile: string | null;
  keepaliveIntervalMs: number | null;
  /** What only the openssh transport reads for this host (ProxyCommand, CertificateFile, several hops, Match blocks). */
  openssh: string[];
  /**
   * The alias, kept so the openssh transport connects to it as the config says (Include, Match and
   * the rest apply); null when the console's own fields say everything.
   */
  configHost: string | null;
  /** What the operator should know about this host (defaults taken, values dropped). */
  notes: string[];
  /** The ids of the command directives (SshConfigImport.commands) that apply to this host. */
  commands: string[];
}

export interface SkippedHost {
  alias: string;
  reason: string;
}

export interface SshConfigImport {
  hosts: ImportedHost[];
  skipped: SkippedHost[];
  issues: SshConfigIssue[];
  /** Every line that makes ssh run something, for at least one imported host, in file order. */
  commands: CommandDirective[];
}

export interface SshConfigImportOptions {
  home: string;
  /** Local user name: OpenSSH's default User and `%u`. */
  localUser: string;
}

const LABEL_OK = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

function expandTokens(value: string, ctx: { home: string; localUser: string; host: string; user: string; alias: string }, onUnknown: (t: string) => void): string {
  let v = value;
  if (v === '~') v = ctx.home;
  else if (v.startsWith('~/')) v = `${ctx.home}/${v.slice(2)}`;
  return v.replace(/%(.)/g, (whole, t: string) => {
    switch (t) {
      case '%':
        return '%';
      case 'd':
        return ctx.home;
      case 'u':
        return ctx.localUser;
      case 'h':
        return ctx.host;
      case 'r':
        return ctx.user;
      case 'n':
        return ctx.alias;
      default:
        onUnknown(whole);
        return whole;
    }
  });
}

function toLabel(alias: string): string {
  if (LABEL_OK.test(alias)) return alias;
  const cleaned = alias.replace(/[^A-Za-z0-9._-]/g, '-').replace(/^[^A-Za-z0-9]+/, '').slice(0, 63);
  return cleaned || 'host';
}

/** HostName takes two tokens: `%h` (the alias) and `%%`; any other `%` is left for the grammar to refuse. */
function hostNameOf(value: string, alias: string): string {
  return value.replace(/%([%h])/g, (_, t: string) => (t === '%' ? '%' : alias));
}

interface Basic {
  eff: Map<string, Directive[]>;
  first: (k: string) => Directive | undefined;
  host: string;
  user: string | null;
  portText: string | undefined;
}

function resolveBasic(blocks: Block[], alias: string): Basic {
  const eff = effective(blocks, alias);
  const first = (k: string) => eff.get(k)?.[0];
  const hostName = first('hostname')?.args[0];
  return { eff, first, host: hostName === undefined ? alias : hostNameOf(hostName, alias), user: first('user')?.args[0] ?? null, portText: first('port')?.args[0] };
}

/** `where (line N)`, naming the file when the line came from an Include. */
function lineOf(d: Directive): string {
  return `line ${d.line}${d.file ? ` of ${d.file}` : ''}`;
}

/**
 * The host's ProxyJump as `user@host[:port]` hops (a hop naming another alias of the file resolved through it),
 * each held to the config's grammar; a string is why the host is refused.
 */
function resolveJump(pj: Directive, blocks: Block[], aliases: readonly string[], user: string, notes: string[]): { hops: string[] } | string {
  const hops: string[] = [];
  for (const raw of pj.args[0]!.split(',')) {
    const hop = raw.replace(/^ssh:\/\//, '');
    const bare = /^[^@:[\]]+$/.test(hop) ? hop : null;
    let spec = hop;
    if (bare && aliases.includes(bare)) {
      const j = resolveBasic(blocks, bare);
      spec = `${j.user ?? user}@${j.host.includes(':') ? `[${j.host}]` : j.host}${j.portText && j.portText !== '22' ? `:${j.portText}` : ''}`;
      notes.push(`jump host ${bare} resolved to ${spec}`);
    }
    const parsed = parseJumpHop(spec);
    if (typeof parsed === 'string') return `ProxyJump (${lineOf(pj)}): ${parsed}`;
    hops.push(`${parsed.user ?? user}@${parsed.host.includes(':') ? `[${parsed.host}]` : parsed.host}${parsed.port !== 22 ? `:${parsed.port}` : ''}`);
  }
  return { hops };
}

/** Why the host's HostName, User or Port cannot be imported; null when they are of the config's grammar. */
function basicProblem(alias: string, b: Basic, user: string, userSet: boolean): string | null {
  const hostLine = b.first('hostname');
  const hp = hostProblem(b.host);
  if (hp) return hostLine ? `HostName (${lineOf(hostLine)}): ${hp}` : `the alias is used as the host name (no HostName): ${hp}`;
  const up = userProblem(user);
  if (up) return userSet ? `User (${lineOf(b.first('user')!)}): ${up}` : `no User, and the local user cannot stand in: ${up}`;
  if (b.portText !== undefined) {
    const n = Number(b.portText);
    if (!/^\d+$/.test(b.portText) || n < 1 || n > 65535) return `Port ${JSON.stringify(b.portText)} (${lineOf(b.first('port')!)}) is not a port number`;
  }
  return null;
}

interface HostContext {
  blocks: Block[];
  aliases: readonly string[];
  matchSeen: boolean;
  options: SshConfigImportOptions;
  issues: SshConfigIssue[];
}

/** One alias as an inventory host, or why it cannot be one (its label is given later). */
function importHost(alias: string, c: HostContext): Omit<ImportedHost, 'label' | 'commands'> | string {
  const b = resolveBasic(c.blocks, alias);
  const notes: string[] = [];
  const user = b.user ?? c.options.localUser;
  const basic = basicProblem(alias, b, user, b.user !== null);
  if (basic) return basic;
  if (!b.user) notes.push(`no User: using the local user "${c.options.localUser}" as ssh does`);
  const port = b.portText === undefined ? 22 : Number(b.portText);
  const ctx = { home: c.options.home, localUser: c.options.localUser, host: b.host, user, alias };
  const identityFiles = (b.eff.get('identityfile') ?? []).map((d) => ({
    d,
    path: expandTokens(d.args[0]!, ctx, (t) => c.issues.push({ file: d.file, line: d.line, directive: d.name, severity: 'warning', message: `token ${t} is not expanded` })),
  }));
  const badPath = identityFiles.find((f) => pathProblem(f.path));
  if (badPath) return `IdentityFile (${lineOf(badPath.d)}): ${pathProblem(badPath.path)}`;
  if (identityFiles.length > 1) notes.push(`${identityFiles.length} IdentityFile entries: the first (${identityFiles[0]!.path}) is used`);
  const identitiesOnly = /^yes$/i.test(b.first('identitiesonly')?.args[0] ?? '');
  const identityFile = identityFiles[0]?.path ?? null;
  if (!identityFile) notes.push('no IdentityFile: authenticates through ssh-agent (SSH_AUTH_SOCK)');

  const openssh: string[] = [];
  for (const [key, name] of OPENSSH_ONLY) if (b.eff.has(key)) openssh.push(name);
  if (c.matchSeen) openssh.push('Match blocks');
  let jumpHost: string | null = null;
  const pj = b.first('proxyjump');
  if (pj && pj.args[0]!.toLowerCase() !== 'none') {
    const jump = resolveJump(pj, c.blocks, c.aliases, user, notes);
    if (typeof jump === 'string') return jump;
    jumpHost = jump.hops.join(',');
    if (jump.hops.length > 1) openssh.push(`${jump.hops.length} ProxyJump hops`);
  }
  if (openssh.length > 0) {
    // The alias becomes ssh's destination (and its %h where the file names no HostName).
    const ap = aliasProblem(alias);
    if (ap) return `${openssh.join(', ')} need the alias, and ${ap}`;
    notes.push(`${openssh.join(', ')}: connects through the openssh transport with the alias "${alias}"`);
  }
  const khf = b.first('userknownhostsfile');
  const knownHostsFile = khf ? expandTokens(khf.args[0]!, ctx, () => undefined) : null;
  if (khf && knownHostsFile !== null && pathProblem(knownHostsFile)) return `UserKnownHostsFile (${lineOf(khf)}): ${pathProblem(knownHostsFile)}`;
  if (khf && khf.args.length > 1) notes.push(`UserKnownHostsFile lists several files: only ${knownHostsFile} is read`);
  const sai = b.first('serveraliveinterval');
  const keepaliveIntervalMs = sai && /^\d+$/.test(sai.args[0]!) && Number(sai.args[0]) > 0 ? Math.min(600, Number(sai.args[0])) * 1000 : null;
  return {
    alias, host: b.host, port, user, identityFile, agent: !(identitiesOnly && identityFile), jumpHost, knownHostsFile, keepaliveIntervalMs,
    openssh, configHost: openssh.length > 0 ? alias : null, notes,
  };
}

/** The command lines that apply to at least one imported host, numbered, each with its hosts; each host gets their ids. */
function attachCommands(lines: readonly CommandLine[], hosts: ImportedHost[]): CommandDirective[] {
  const out: CommandDirective[] = [];
  for (const l of lines) {
    const applies = hosts.filter((h) => l.patterns === null || hostMatches(l.patterns, h.alias));
    if (applies.length === 0) continue;
    const id = `cmd-${out.length + 1}`;
    out.push({ id, directive: l.directive, text: l.text, file: l.file, line: l.line, aliases: applies.map((h) => h.alias) });
    for (const h of applies) h.commands.push(id);
  }
  return out;
}

/** Every concrete `Host` alias, resolved with the defaults that apply to it. */
export function importSshConfig(
  source: string | readonly SshConfigLine[],
  options: SshConfigImportOptions,
  loaderIssues: readonly SshConfigIssue[] = [],
): SshConfigImport {
  const issues: SshConfigIssue[] = [...loaderIssues];
  const lines = typeof source === 'string' ? inlineUnfollowedIncludes(splitConfigLines(source), issues) : source;
  const { blocks, commands, matchSeen } = parse(lines, issues);
  const aliases: string[] = [];
  for (const block of blocks.slice(1)) {
    for (const p of block.patterns) if (isConcrete(p) && !aliases.includes(p)) aliases.push(p);
  }
  const hosts: ImportedHost[] = [];
  const skipped: SkippedHost[] = [];
  const labels = new Set<string>();
  for (const alias of aliases) {
    const h = importHost(alias, { blocks, aliases, matchSeen, options, issues });
    if (typeof h === 'string') {
      skipped.push({ alias: escapeControls(alias), reason: h });
      continue;
    }
    let label = toLabel(alias);
    if (label !== alias) h.notes.push(`label "${label}" (the alias ${JSON.stringify(alias)} has characters a label may not hold)`);
    for (let n = 2; labels.has(label.toLowerCase()); n++) label = `${toLabel(alias).slice(0, 60)}-${n}`;
    labels.add(label.toLowerCase());
    hosts.push({ ...h, label, commands: [] });
  }
  // In file order: the first file's lines, then each included file's, each by line number.
  const fileOrder = new Map<string | null, number>();
  for (const l of lines) if (!fileOrder.has(l.file)) fileOrder.set(l.file, fileOrder.size);
  issues.sort((a, b) => (fileOrder.get(a.file) ?? 0) - (fileOrder.get(b.file) ?? 0) || a.line - b.line);
  return { hosts, skipped, issues, commands: attachCommands(commands, hosts) };
}
