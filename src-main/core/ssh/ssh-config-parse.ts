// The reading of an OpenSSH client config, line by line, as ssh reads it:
// `Keyword value` / `Keyword=value` (double quotes group), Host blocks with
// their patterns, Match blocks skipped (the openssh transport reads them), and
// the first value of a keyword winning. Every line that is not imported is
// reported; lines that make ssh run something are collected, never run.
import { hostMatches } from './known-hosts.js';
import { commandDirective, valueText, type CommandLine } from './ssh-config-commands.js';

export interface SshConfigIssue {
  /** The file the line is in, when it came from an Include (null: the file read first). */
  file: string | null;
  line: number;
  directive: string;
  severity: 'info' | 'warning';
  message: string;
}

/** One line of a config, with the file it came from (Includes are inlined where they stand). */
export interface SshConfigLine {
  file: string | null;
  line: number;
  text: string;
}

export interface Directive {
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

export interface Block {
  patterns: string[];
  directives: Directive[];
}

const IMPORTED = new Set(['hostname', 'user', 'port', 'identityfile', 'proxyjump', 'userknownhostsfile', 'serveraliveinterval', 'identitiesonly']);
// Kept so the host is connected through the openssh transport, which reads them from the file itself.
export const OPENSSH_ONLY = new Map([
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
/** Splits a value into arguments: whitespace-separated, double quotes group. */
function splitArgs(text: string): string[] {
  const out: string[] = [];
  const re = /"([^"]*)"|(\S+)/g;
  for (const m of text.matchAll(re)) out.push(m[1] ?? m[2]!);
  return out;
}

export interface Parsed {
  blocks: Block[];
  commands: CommandLine[];
  matchSeen: boolean;
}

export function parse(lines: readonly SshConfigLine[], issues: SshConfigIssue[]): Parsed {
  // Directives before the first Host apply to every host.
  const blocks: Block[] = [{ patterns: ['*'], directives: [] }];
  const commands: CommandLine[] = [];
  let matchSeen = false;
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
    const command = commandDirective(key, args);
    // Inside a Match block nothing says which hosts it is for without evaluating it, which is never done: all of them.
    if (command) commands.push({ directive: command, text: valueText(text), file, line, patterns: key === 'match' || current === null ? null : current.patterns });
    if (key === 'host') {
      current = { patterns: args, directives: [] };
      blocks.push(current);
      if (args.length === 0) at(name, 'warning', 'Host without patterns');
      continue;
    }
    if (key === 'match') {
      current = null;
      matchSeen = true;
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
  return { blocks, commands, matchSeen };
}

/** Text given as it is (uploaded, or a test): its Include lines cannot be followed, and say so. */
export function inlineUnfollowedIncludes(lines: SshConfigLine[], issues: SshConfigIssue[]): SshConfigLine[] {
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

export function isConcrete(pattern: string): boolean {
  return !/[*?!]/.test(pattern);
}

/** First value wins; IdentityFile accumulates. */
export function effective(blocks: Block[], alias: string): Map<string, Directive[]> {
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
