// The lines of an OpenSSH client config that make ssh run something on the
// operator's own computer: ProxyCommand, LocalCommand (with
// PermitLocalCommand), KnownHostsCommand, a `Match exec` criterion, and the
// PKCS11Provider / SecurityKeyProvider libraries ssh loads into itself. An
// import shows each as text with the hosts it applies to, and its apply needs
// each acknowledged by the operator. Nothing here runs or evaluates them: a
// `Match exec` is never tried to find out whether its block applies, so its
// block is taken to apply to every host.
import { escapeControls } from '../base/index.js';

export interface CommandDirective {
  /** Names it in this import (`cmd-1`, …), for the apply's acknowledgements. */
  id: string;
  /** `ProxyCommand`, `Match exec`, … */
  directive: string;
  /** The line's value as written (control characters shown as escapes). */
  text: string;
  file: string | null;
  line: number;
  /** The aliases it applies to. */
  aliases: string[];
}

/** A command line as `parse` meets it: where it stands decides which hosts it applies to. */
export interface CommandLine {
  directive: string;
  text: string;
  file: string | null;
  line: number;
  /** The Host block's patterns; null inside a Match block (or for the Match line itself): every host. */
  patterns: string[] | null;
}

// A value that turns the keyword off is no command.
const OFF = new Set(['none', 'no', 'internal']);
const COMMAND_KEYS = new Map([
  ['proxycommand', 'ProxyCommand'],
  ['localcommand', 'LocalCommand'],
  ['permitlocalcommand', 'PermitLocalCommand'],
  ['knownhostscommand', 'KnownHostsCommand'],
  ['pkcs11provider', 'PKCS11Provider'],
  ['securitykeyprovider', 'SecurityKeyProvider'],
]);

/** The directive's name when this keyword (with these arguments) makes ssh run something; null otherwise. */
export function commandDirective(key: string, args: readonly string[]): string | null {
  if (key === 'match') return args.some((a) => a.toLowerCase() === 'exec') ? 'Match exec' : null;
  const name = COMMAND_KEYS.get(key);
  if (!name || args.length === 0 || OFF.has(args[0]!.toLowerCase())) return null;
  return name;
}

/** The value part of a `Keyword value` / `Keyword=value` line, as written, one line a terminal cannot act on. */
export function valueText(line: string): string {
  const rest = line.trim().replace(/^[A-Za-z][A-Za-z0-9]*(?:\s*=\s*|\s+)/, '');
  return escapeControls(rest);
}

/**
 * What applying means for one directive, in words: whether ssh will run it for the hosts that keep this file
 * (`readBy`: those connected through the operator's file by their alias), or why it will not.
 */
export function commandEffect(c: Pick<CommandDirective, 'directive'>, readBy: readonly string[], uploaded: boolean): string {
  if (c.directive === 'LocalCommand' || c.directive === 'PermitLocalCommand') {
    return 'not run today: the console sets PermitLocalCommand no ahead of your file, and ssh keeps the first value';
  }
  if (c.directive === 'KnownHostsCommand') return "not run today: the console's own KnownHostsCommand comes ahead of your file, and ssh keeps the first value";
  if (readBy.length === 0) {
    return uploaded
      ? 'not run by the console: an uploaded file is not kept, so these hosts are added without it'
      : "not run by the console: these hosts connect with the console's own settings, not through this file";
  }
  const hosts = readBy.join(', ');
  if (c.directive === 'Match exec') return `ssh runs this on this computer, through /bin/sh, whenever it reads the file to connect ${hosts}`;
  if (c.directive === 'ProxyCommand') return `ssh runs this on this computer, through /bin/sh, each time it connects ${hosts}`;
  return `ssh loads this library into itself when it connects ${hosts}`;
}
