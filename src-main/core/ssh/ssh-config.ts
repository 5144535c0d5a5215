// Reads an OpenSSH client config (`~/.ssh/config`) into inventory hosts:
// Host (with wildcard and negated patterns as defaults), HostName, User, Port,
// IdentityFile, ProxyJump (hops resolved through the file's own aliases), plus
// UserKnownHostsFile and ServerAliveInterval. A host that needs what only
// OpenSSH reads (ProxyCommand, CertificateFile, IdentityAgent, several hops,
// Match blocks) keeps its alias, for the openssh transport to connect to as
// written. OpenSSH's rule holds: the first value obtained for a
// directive wins. Everything else is reported, never fatal. A line that is not
// `Keyword value` is reported by file and number only: its text is never
// echoed (the preview must not become a way to read a file).
import { hostMatches } from './known-hosts.js';
import { parseJumpHost } from './jump.js';

export interface SshConfigIssue {
  /** The file the line is in, when it came from an Include (null: the file read first). */
  file: string | null;
  line: number;
  directive: string;
  severity: 'info' | 'warning';
  message: string;
}

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
}

export interface SkippedHost {
  alias: string;
  reason: string;
}

export interface SshConfigImport {
  hosts: ImportedHost[];
  skipped: SkippedHost[];
  issues: SshConfigIssue[];
}

export interface SshConfigImportOptions {
  home: string;
  /** Local user name: OpenSSH's default User and `%u`. */
  localUser: string;
}

/** One line of a config, with the file it came from (Includes are inlined where they stand). */
export interface SshConfigLine {
  file: string | null;
  line: number;
  text: string;
}

interface Directive {
  key: string;
  /** As written, for messages. */
  name: string;
  args: string[];
  file: string | null;
  line: number;
}

/** A config text as lines, each naming its file. */
export function splitConfigLines(text: string, file: string | null = null): SshConfigLine[] {
  return text.split(/\r?\n/).map((t, i) => ({ file, line: i + 1, text: t }));
}

/** Splits a line into keyword and arguments; null when it is not `Keyword value` (or a comment or blank). */
export function directiveOf(text: string): { name: string; args: string[] } | null | 'blank' {
  const trimmed = text.trim();
  if (trimmed === '' || trimmed.startsWith('#')) return 'blank';
  const m = /^([A-Za-z][A-Za-z0-9]*)(?:\s*=\s*|\s+)(.*)$/.exec(trimmed);
  if (!m || m[1]!.length > 40) return null;
  return { name: m[1]!, args: splitArgs(m[2] ?? '') };
}

interface Block {
  patterns: string[];
  directives: Directive[];
}

const IMPORTED = new Set(['hostname', 'user', 'port', 'identityfile', 'proxyjump', 'userknownhostsfile', 'serveraliveinterval', 'identitiesonly']);
// Kept so the host is connected through the openssh transport, which reads them from the file itself.
const OPENSSH_ONLY = new Map([
  ['proxycommand', 'ProxyCommand'],
  ['certificatefile', 'CertificateFile'],
  ['identityagent', 'IdentityAgent'],
]);
// Real OpenSSH directives that do not map to the inventory: reported as info.
const NOT_IMPORTED = new Set(
  [
    'addkeystoagent', 'addressfamily', 'batchmode', 'bindaddress', 'bindinterface', 'canonicaldomains', 'canonicalizefallbacklocal',
    'canonicalizehostname', 'canonicalizemaxdots', 'canonicalizepermittedcnames', 'casignaturealgorithms', 'certificatefile',
    'checkhostip', 'ciphers', 'clearallforwardings', 'compression', 'connectionattempts', 'connecttimeout', 'controlmaster',
    'controlpath', 'controlpersist', 'dynamicforward', 'enableescapecommandline', 'enablesshkeysign', 'escapechar',
    'exitonforwardfailure', 'fingerprinthash', 'forkafterauthentication', 'forwardagent', 'forwardx11', 'forwardx11timeout',
    'forwardx11trusted', 'gatewayports', 'globalknownhostsfile', 'gssapiauthentication', 'gssapidelegatecredentials',
    'hashknownhosts', 'hostbasedacceptedalgorithms', 'hostbasedauthentication', 'hostkeyalgorithms', 'hostkeyalias',
    'ignoreunknown', 'ipqos', 'kbdinteractiveauthentication', 'kbdinteractivedevices', 'kexalgorithms',
    'knownhostscommand', 'localcommand', 'localforward', 'loglevel', 'logverbose', 'macs', 'nohostauthenticationforlocalhost',
    'numberofpasswordprompts', 'passwordauthentication', 'permitlocalcommand', 'permitremoteopen', 'pkcs11provider',
    'preferredauthentications', 'proxyusefdpass', 'pubkeyacceptedalgorithms', 'pubkeyacceptedkeytypes',
    'pubkeyauthentication', 'rekeylimit', 'remotecommand', 'remoteforward', 'requesttty', 'requiredrsasize', 'revokedhostkeys',
    'securitykeyprovider', 'sendenv', 'serveralivecountmax', 'sessiontype', 'setenv', 'stdinnull', 'streamlocalbindmask',
    'streamlocalbindunlink', 'stricthostkeychecking', 'syslogfacility', 'tag', 'tcpkeepalive', 'tunnel', 'tunneldevice',
    'updatehostkeys', 'usekeychain', 'useprivilegedport', 'verifyhostkeydns', 'visualhostkey', 'xauthlocation',
  ],
);
const LABEL_OK = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

/** Splits a value into arguments: whitespace-separated, double quotes group. */
function splitArgs(text: string): string[] {
  const out: string[] = [];
  const re = /"([^"]*)"|(\S+)/g;
  for (const m of text.matchAll(re)) out.push(m[1] ?? m[2]!);
  return out;
}

function parse(lines: readonly SshConfigLine[], issues: SshConfigIssue[], matchSeen: { value: boolean }): Block[] {
  // Directives before the first Host apply to every host.
  const blocks: Block[] = [{ patterns: ['*'], directives: [] }];
  let current: Block | null = blocks[0]!;
  for (const { file, line, text } of lines) {
    const d = directiveOf(text);
    if (d === 'blank') continue;
    const at = (directive: string, severity: SshConfigIssue['severity'], message: string) => issues.push({ file, line, directive, severity, message });
    if (d === null) {
      at('', 'warning', 'not "Keyword value"; ignored (its text is not shown)');
      continue;
    }
    const { name, args } = d;
    const key = name.toLowerCase();
    if (key === 'host') {
      current = { patterns: args, directives: [] };
      blocks.push(current);
      if (args.length === 0) at(name, 'warning', 'Host without patterns');
      continue;
    }
    if (key === 'match') {
      current = null;
      matchSeen.value = true;
      at(name, 'info', 'Match blocks are read by the openssh transport only: hosts of this file connect through ssh with their alias');
      continue;
    }
    if (key === 'include') continue; // the loader inlined the files (or reported why not)
    if (current === null) continue; // inside a skipped Match block
    if (OPENSSH_ONLY.has(key)) {
      if (args.length > 0 && args[0]!.toLowerCase() !== 'none') current.directives.push({ key, name, args, file, line });
      at(name, 'info', `${name} is read by the openssh transport (the host connects through ssh with its alias)`);
      continue;
    }
    if (IMPORTED.has(key)) {
      if (args.length === 0) at(name, 'warning', `${name} without a value`);
      else current.directives.push({ key, name, args, file, line });
      continue;
    }
    if (NOT_IMPORTED.has(key)) {
      at(name, 'info', `${name} is not imported (the console does not use it)`);
      continue;
    }
    at(name, 'warning', `unknown directive ${name}; ignored`);
  }
  return blocks;
}

/** Text given as it is (uploaded, or a test): its Include lines cannot be followed, and say so. */
function inlineUnfollowedIncludes(lines: SshConfigLine[], issues: SshConfigIssue[]): SshConfigLine[] {
  for (const l of lines) {
    const d = directiveOf(l.text);
    if (d && d !== 'blank' && d.name.toLowerCase() === 'include') {
      issues.push({
        file: l.file,
        line: l.line,
        directive: d.name,
        severity: 'warning',
        message: 'Include is not followed in a file read on its own; import ~/.ssh/config (its Includes are followed) or import that file too',
      });
    }
  }
  return lines;
}

function isConcrete(pattern: string): boolean {
  return !/[*?!]/.test(pattern);
}

/** First value wins; IdentityFile accumulates. */
function effective(blocks: Block[], alias: string): Map<string, Directive[]> {
  const out = new Map<string, Directive[]>();
  for (const block of blocks) {
    if (!hostMatches(block.patterns, alias)) continue;
    for (const d of block.directives) {
      const list = out.get(d.key);
      if (!list) out.set(d.key, [d]);
      else if (d.key === 'identityfile') list.push(d);
    }
  }
  return out;
}

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

/** Every concrete `Host` alias, resolved with the defaults that apply to it. */
export function importSshConfig(
  source: string | readonly SshConfigLine[],
  options: SshConfigImportOptions,
  loaderIssues: readonly SshConfigIssue[] = [],
): SshConfigImport {
  const issues: SshConfigIssue[] = [...loaderIssues];
  const lines = typeof source === 'string' ? inlineUnfollowedIncludes(splitConfigLines(source), issues) : source;
  const matchSeen = { value: false };
  const blocks = parse(lines, issues, matchSeen);
  const aliases: string[] = [];
  for (const block of blocks.slice(1)) {
    for (const p of block.patterns) if (isConcrete(p) && !aliases.includes(p)) aliases.push(p);
  }

  const resolveBasic = (alias: string) => {
    const eff = effective(blocks, alias);
    const first = (k: string) => eff.get(k)?.[0];
    const host = first('hostname')?.args[0]?.replace(/%h/g, alias) ?? alias;
    const user = first('user')?.args[0] ?? null;
    const portText = first('port')?.args[0];
    return { eff, first, host, user, portText };
  };

  const hosts: ImportedHost[] = [];
  const skipped: SkippedHost[] = [];
  const labels = new Set<string>();
  for (const alias of aliases) {
    const { eff, first, host, user: userSet, portText } = resolveBasic(alias);
    const notes: string[] = [];
    const user = userSet ?? options.localUser;
    if (!userSet) notes.push(`no User: using the local user "${options.localUser}" as ssh does`);
    let port = 22;
    if (portText !== undefined) {
      const n = Number(portText);
      if (!/^\d+$/.test(portText) || n < 1 || n > 65535) {
        skipped.push({ alias, reason: `Port "${portText}" (line ${first('port')!.line}) is not a port number` });
        continue;
      }
      port = n;
    }
    const ctx = { home: options.home, localUser: options.localUser, host, user, alias };
    const identityFiles = (eff.get('identityfile') ?? []).map((d) =>
      expandTokens(d.args[0]!, ctx, (t) => issues.push({ file: d.file, line: d.line, directive: d.name, severity: 'warning', message: `token ${t} is not expanded` })),
    );
    if (identityFiles.length > 1) notes.push(`${identityFiles.length} IdentityFile entries: the first (${identityFiles[0]}) is used`);
    const identitiesOnly = /^yes$/i.test(first('identitiesonly')?.args[0] ?? '');
    const identityFile = identityFiles[0] ?? null;
    const agent = !(identitiesOnly && identityFile);
    if (!identityFile) notes.push('no IdentityFile: authenticates through ssh-agent (SSH_AUTH_SOCK)');

    const openssh: string[] = [];
    for (const [key, name] of OPENSSH_ONLY) if (eff.has(key)) openssh.push(name);
    if (matchSeen.value) openssh.push('Match blocks');
    let jumpHost: string | null = null;
    const pj = first('proxyjump');
    if (pj && pj.args[0]!.toLowerCase() !== 'none') {
      const spec = pj.args[0]!;
      const hops: string[] = [];
      let bad: string | null = null;
      for (const raw of spec.split(',')) {
        const hop = raw.replace(/^ssh:\/\//, '');
        const bare = /^[^@:[\]]+$/.test(hop) ? hop : null;
        if (bare && aliases.includes(bare)) {
          const j = resolveBasic(bare);
          const resolved = `${j.user ?? user}@${j.host}${j.portText && j.portText !== '22' ? `:${j.portText}` : ''}`;
          notes.push(`jump host ${bare} resolved to ${resolved}`);
          hops.push(resolved);
          continue;
        }
        try {
          const parsed = parseJumpHost(hop);
          hops.push(`${parsed.user ?? user}@${parsed.host.includes(':') ? `[${parsed.host}]` : parsed.host}${parsed.port !== 22 ? `:${parsed.port}` : ''}`);
        } catch {
          bad = hop;
          break;
        }
      }
      if (bad !== null) {
        skipped.push({ alias, reason: `ProxyJump "${bad}" (line ${pj.line}) is not user@host:port` });
        continue;
      }
      jumpHost = hops.join(',');
      if (hops.length > 1) openssh.push(`${hops.length} ProxyJump hops`);
    }
    if (openssh.length > 0) notes.push(`${openssh.join(', ')}: connects through the openssh transport with the alias "${alias}"`);
    const khf = first('userknownhostsfile');
    const knownHostsFile = khf ? expandTokens(khf.args[0]!, ctx, () => undefined) : null;
    if (khf && khf.args.length > 1) notes.push(`UserKnownHostsFile lists several files: only ${knownHostsFile} is read`);
    const sai = first('serveraliveinterval');
    const keepaliveIntervalMs = sai && /^\d+$/.test(sai.args[0]!) && Number(sai.args[0]) > 0 ? Math.min(600, Number(sai.args[0])) * 1000 : null;

    let label = toLabel(alias);
    if (label !== alias) notes.push(`label "${label}" (the alias "${alias}" has characters a label may not hold)`);
    for (let n = 2; labels.has(label.toLowerCase()); n++) label = `${toLabel(alias).slice(0, 60)}-${n}`;
    labels.add(label.toLowerCase());
    hosts.push({ alias, label, host, port, user, identityFile, agent, jumpHost, knownHostsFile, keepaliveIntervalMs, openssh, configHost: openssh.length > 0 ? alias : null, notes });
  }
  // In file order: the first file's lines, then each included file's, each by line number.
  const fileOrder = new Map<string | null, number>();
  for (const l of lines) if (!fileOrder.has(l.file)) fileOrder.set(l.file, fileOrder.size);
  issues.sort((a, b) => (fileOrder.get(a.file) ?? 0) - (fileOrder.get(b.file) ?? 0) || a.line - b.line);
  return { hosts, skipped, issues };
}
