// What the openssh transport hands the system `ssh`: the config file it
// writes per host (the console's trust rules first, since OpenSSH keeps the
// first value it reads for a keyword; then the host as the inventory has it,
// or the operator's own config through Include), the client's version check,
// the control-socket path rule, and the reading of ssh's stderr into the
// same coded errors the builtin transport gives.
import { createHash } from 'node:crypto';
import { AppError } from '../base/index.js';
import { SshErrorCode } from './errors.js';
import { aliasProblem, hostProblem, unbracketHost, userProblem } from '../config/index.js';
import { parseJumpHost } from './jump.js';
import type { SshHostTarget } from './session.js';

/** The alias the generated config gives a host that has no configHost of its own. */
export const TARGET_ALIAS = 'gc-target';

/** sun_path holds 108 bytes on Linux, 104 on macOS and the BSDs: the smaller, counted in bytes, with its NUL. */
export const MAX_SOCKET_PATH_BYTES = 103;

/** KnownHostsCommand (8.5) and SSH_ASKPASS_REQUIRE (8.4) are what the transport cannot do without. */
export const MIN_OPENSSH: readonly [number, number] = [8, 5];

export interface OpenSshVersion {
  major: number;
  minor: number;
  text: string;
}

/** `OpenSSH_9.2p1 Debian-2+deb12u10, OpenSSL …` → 9.2; null when it is not OpenSSH. */
export function parseOpenSshVersion(text: string): OpenSshVersion | null {
  const m = /OpenSSH_(?:for_Windows_)?(\d+)\.(\d+)/.exec(text);
  if (!m) return null;
  return { major: Number(m[1]), minor: Number(m[2]), text: text.trim().split('\n')[0]!.trim() };
}

export function assertUsableVersion(version: OpenSshVersion | null, binary: string, raw: string): OpenSshVersion {
  if (!version) {
    throw new AppError(SshErrorCode.OPENSSH_MISSING, `${binary} is not an OpenSSH client (it says "${raw.trim().slice(0, 120)}")`, { details: { binary } });
  }
  const [major, minor] = MIN_OPENSSH;
  if (version.major < major || (version.major === major && version.minor < minor)) {
    throw new AppError(
      SshErrorCode.OPENSSH_TOO_OLD,
      `${version.text} is too old for the openssh transport: it needs OpenSSH ${major}.${minor} or newer (KnownHostsCommand, SSH_ASKPASS_REQUIRE); upgrade it or use transport: builtin`,
      { details: { binary, version: `${version.major}.${version.minor}` } },
    );
  }
  return version;
}

/** The short, stable file stem for a host's control files (labels may be long; sockets may not). */
export function controlStem(label: string): string {
  return createHash('sha256').update(label).digest('hex').slice(0, 12);
}

export function assertSocketPath(path: string, label: string): void {
  const bytes = Buffer.byteLength(path);
  if (bytes > MAX_SOCKET_PATH_BYTES) {
    throw new AppError(
      SshErrorCode.CONTROL_PATH_TOO_LONG,
      `${label}: the control socket path ${path} is ${bytes} bytes; a Unix socket path may hold ${MAX_SOCKET_PATH_BYTES} (macOS: 104 with its terminator). Start the console with a shorter --data-dir.`,
      { details: { path, bytes, max: MAX_SOCKET_PATH_BYTES } },
    );
  }
}

/**
 * How ssh reads a keyword's argument after unquoting it: `tokens` expands %-tokens and `${ENV}` (IdentityFile,
 * CertificateFile, IdentityAgent, ControlPath, UserKnownHostsFile: see ssh_config TOKENS); `literal` does not
 * in OpenSSH 9.2 but might in another release (Include, KnownHostsCommand's program), so neither may appear.
 */
type Expansion = 'tokens' | 'literal';

function unsupported(what: string, why: string, value: string): AppError {
  return new AppError(SshErrorCode.CONFIG_UNSUPPORTED, `${what} ${JSON.stringify(value.slice(0, 200))} ${why}, which the console will not write into an OpenSSH config`, {
    details: { what },
  });
}

/**
 * A value as one ssh_config argument, always in double quotes so spaces, `#` and `'` stay part of it. What no
 * quoting makes literal in every supported OpenSSH (8.5 splits on `"` alone; 8.7+ also reads `\` escapes) is
 * refused: a double quote, a backslash, a control character. `%` is written `%%` where ssh expands tokens.
 */
export function configArg(value: string, what: string, expansion: Expansion): string {
  // eslint-disable-next-line no-control-regex -- control characters are what is refused
  if (/[\u0000-\u001f\u007f]/.test(value)) throw unsupported(what, 'holds a line break or another control character', value);
  if (/["\\]/.test(value)) throw unsupported(what, 'holds a double quote or a backslash', value);
  if (value.includes('${')) throw unsupported(what, 'holds "${", which ssh reads as an environment variable', value);
  if (expansion === 'literal' && value.includes('%')) throw unsupported(what, 'holds "%", which some OpenSSH releases read as a token here', value);
  return `"${expansion === 'tokens' ? value.replace(/%/g, '%%') : value}"`;
}

// ProxyJump's hops and `-F <config>` are pasted into a `/bin/sh -c` line by ssh itself, then %-expanded.
const SHELL_INERT_PATH = /^[A-Za-z0-9_@+=:,./-]+$/;

/** The generated config's own path, when ssh will paste it into a shell (ProxyJump); refused unless it is inert there. */
function assertJumpSafeConfigPath(configPath: string, label: string): void {
  if (SHELL_INERT_PATH.test(configPath)) return;
  throw new AppError(
    SshErrorCode.CONFIG_UNSUPPORTED,
    `${label}: a jump host through the openssh transport needs the console's data folder path to be plain (letters, digits, and / . _ - @ + = : ,), because ssh hands "-F <that path>" to /bin/sh for each hop (here ${JSON.stringify(configPath)}); start the console with such a --data-dir, or use transport: builtin for a single hop`,
    { details: { configPath } },
  );
}

/** The host's HostName and User as the config's grammar has them; anything else here is refused, not written. */
function hostAndUser(target: SshHostTarget): { host: string; user: string } {
  const { host, user } = target.ssh;
  const hp = hostProblem(host);
  if (hp) throw new AppError(SshErrorCode.CONFIG_UNSUPPORTED, `${target.label}: ssh.host ${hp}`, { details: { field: 'ssh.host' } });
  const up = userProblem(user);
  if (up) throw new AppError(SshErrorCode.CONFIG_UNSUPPORTED, `${target.label}: ssh.user ${up}`, { details: { field: 'ssh.user' } });
  return { host: unbracketHost(host), user };
}

/** IdentityAgent reads a leading `$` as an environment variable and `none` / `SSH_AUTH_SOCK` as words, not paths. */
function agentArg(sock: string): string {
  if (sock.startsWith('$') || sock === 'none' || sock === 'SSH_AUTH_SOCK') throw unsupported('the agent socket', 'is not a path', sock);
  return configArg(sock, 'the agent socket', 'tokens');
}

/** Every hop `user@host:port`, the target's user where a hop names none (as the builtin transport does). */
export function jumpChain(jumpHost: string, defaultUser: string): string {
  return jumpHost
    .split(',')
    .map((hop) => {
      const j = parseJumpHost(hop.trim());
      const host = j.host.includes(':') ? `[${j.host}]` : j.host;
      return `${j.user ?? defaultUser}@${host}:${j.port}`;
    })
    .join(',');
}

export interface GeneratedConfigInput {
  target: SshHostTarget;
  /** Where this text is written (ssh is started with `-F` on it). */
  configPath: string;
  knownHostsFile: string;
  controlPath: string;
  helperProgram: string;
  keepaliveIntervalS: number;
  keepaliveCountMax: number;
  connectTimeoutS: number;
  /** The agent socket when the host uses the agent (ssh.agent: SSH_AUTH_SOCK; or ssh.identityAgent). */
  agentSock: string | null;
}

/**
 * The config file for one host. Rules the console keeps for itself come first
 * (first value wins, so neither the inventory nor an operator's Include can
 * loosen them), then the host.
 */
export function generatedConfig(input: GeneratedConfigInput): { text: string; alias: string } {
  const { target, knownHostsFile, controlPath, helperProgram } = input;
  const ssh = target.ssh;
  const lines: string[] = [
    `# Written by GPU Console for host ${target.label}; rewritten at every connect. Do not edit.`,
    'Host *',
    // Trust is the console's: ssh accepts exactly the keys the helper vouches for, plus known_hosts
    // (where @cert-authority and @revoked lines keep their OpenSSH meaning), and asks nobody.
    '  StrictHostKeyChecking yes',
    `  UserKnownHostsFile ${configArg(knownHostsFile, 'knownHostsFile', 'tokens')}`,
    '  GlobalKnownHostsFile /dev/null',
    `  KnownHostsCommand ${configArg(helperProgram, 'the helper path', 'literal')} hostkey %I %H %t %K`,
    '  UpdateHostKeys no',
    '  CheckHostIP no',
    '  HashKnownHosts no',
    '  VerifyHostKeyDNS no',
    // One connection per host, the console's.
    `  ControlPath ${configArg(controlPath, 'the control path', 'tokens')}`,
    '  ControlPersist no',
    // Nothing of the operator's desktop travels to the GPU host, and no local commands run.
    '  ForwardAgent no',
    '  ForwardX11 no',
    '  PermitLocalCommand no',
    '  RequestTTY no',
    '  ExitOnForwardFailure yes',
    '  StreamLocalBindUnlink yes',
    '  StreamLocalBindMask 0177',
    // Prompts go to the console's askpass helper, never a terminal; passwords are not asked for.
    '  BatchMode no',
    '  PasswordAuthentication no',
    `  ServerAliveInterval ${input.keepaliveIntervalS}`,
    `  ServerAliveCountMax ${input.keepaliveCountMax}`,
    `  ConnectTimeout ${input.connectTimeoutS}`,
    '  LogLevel ERROR',
  ];
  if (ssh.configHost) {
    const file = ssh.configFile ?? '~/.ssh/config';
    // Include globs its argument: a literal *, ? or [ would read other files.
    if (/[*?[]/.test(file)) throw unsupported('configFile', 'holds a glob character (*, ? or [)', file);
    lines.push(`Include ${configArg(file, 'configFile', 'literal')}`);
    // The destination ssh is given (and its %h when the file names no HostName): held to the alias grammar.
    const ap = aliasProblem(ssh.configHost);
    if (ap) throw new AppError(SshErrorCode.CONFIG_UNSUPPORTED, `${target.label}: ssh.configHost ${ap}`, { details: { field: 'ssh.configHost' } });
    return { text: lines.join('\n') + '\n', alias: ssh.configHost };
  }
  const { host, user } = hostAndUser(target);
  lines.push(`Host ${TARGET_ALIAS}`, `  HostName ${host}`, `  Port ${ssh.port}`, `  User ${user}`);
  // The operator's own command, run by ssh as written (%h, %p, %r its tokens); one line of it.
  if (ssh.proxyCommand) {
    if (/[\r\n\0]/.test(ssh.proxyCommand)) throw unsupported('proxyCommand', 'holds a line break', ssh.proxyCommand);
    lines.push(`  ProxyCommand ${ssh.proxyCommand}`);
  }
  if (ssh.jumpHost) {
    assertJumpSafeConfigPath(input.configPath, target.label);
    lines.push(`  ProxyJump ${jumpChain(ssh.jumpHost, user)}`);
  }
  // Credentials apply to every hop (the builtin transport offers the same ones to its jump host).
  lines.push('Host *');
  if (ssh.identityFile) lines.push(`  IdentityFile ${configArg(ssh.identityFile, 'identityFile', 'tokens')}`);
  if (ssh.certificateFile) lines.push(`  CertificateFile ${configArg(ssh.certificateFile, 'certificateFile', 'tokens')}`);
  lines.push(`  IdentityAgent ${input.agentSock ? agentArg(input.agentSock) : 'none'}`);
  // Only what the inventory names: keys lying in ~/.ssh are not tried behind the operator's back. With an
  // agent, its keys are offered too (after the key file), as the builtin transport does; IdentitiesOnly
  // would hide every agent key but the file's.
  lines.push(`  IdentitiesOnly ${input.agentSock ? 'no' : 'yes'}`);
  return { text: lines.join('\n') + '\n', alias: TARGET_ALIAS };
}

/** A hop's problem as ssh's stderr says it; null when nothing there is recognised. */
export function classifyStderr(stderr: string, where: string): AppError | null {
  const text = stderr.trim();
  const last = lastLines(text);
  const details = { stderr: last };
  if (/stdio forwarding failed|open failed: administratively prohibited|channel \d+: open failed/.test(text)) {
    return new AppError(SshErrorCode.JUMP_FAILED, `${where}: a jump host refused to forward to the next hop: ${last}`, { retryable: true, details });
  }
  if (/Permission denied \(/.test(text)) {
    return new AppError(SshErrorCode.AUTH_FAILED, `${where}: authentication failed (${/Permission denied \(([^)]*)\)/.exec(text)?.[1] ?? 'publickey'} refused): ${last}`, { details });
  }
  if (/Could not resolve hostname|Name or service not known|nodename nor servname/.test(text)) {
    return new AppError(SshErrorCode.HOST_UNRESOLVED, `${where}: ${last}`, { retryable: true, details });
  }
  if (/Connection timed out|Operation timed out|timed out during banner exchange/.test(text)) {
    return new AppError(SshErrorCode.TIMEOUT, `${where}: ${last}`, { retryable: true, details });
  }
  if (/Bad configuration option|Unsupported option|line \d+: |Can't open user config file|Include .* not found|no argument after keyword/i.test(text) && !/Permission denied/.test(text)) {
    return new AppError(SshErrorCode.OPENSSH_CONFIG_INVALID, `${where}: ssh refused its configuration: ${last}`, { details });
  }
  if (/Load key .*: (incorrect passphrase|bad permissions|invalid format|No such file)/.test(text)) {
    return new AppError(SshErrorCode.KEY_UNREADABLE, `${where}: ${last}`, { details });
  }
  if (/kex_exchange_identification|Connection closed by UNKNOWN|Connection closed by|Connection reset|Connection refused|No route to host|Network is unreachable|Broken pipe|banner exchange/.test(text)) {
    // The errno as the builtin transport records it, so both say alike whether the link comes back by itself.
    return new AppError(SshErrorCode.CONNECT_FAILED, `${where}: ${last}`, { retryable: true, details: { ...details, ...errnoOf(text) } });
  }
  if (/Timeout, server .* not responding|Connection to .* closed/.test(text)) {
    return new AppError(SshErrorCode.DISCONNECTED, `${where}: ${last}`, { retryable: true, details });
  }
  return null;
}

/** ssh's words for a failed connect as the errno they stand for (ssh/recovery.ts reads it). */
function errnoOf(text: string): { errno?: string } {
  if (/Connection refused/.test(text)) return { errno: 'ECONNREFUSED' };
  if (/Connection reset/.test(text)) return { errno: 'ECONNRESET' };
  if (/No route to host/.test(text)) return { errno: 'EHOSTUNREACH' };
  if (/Network is unreachable/.test(text)) return { errno: 'ENETUNREACH' };
  return {};
}

/** The last few lines of stderr, one line, for a message (ssh's own words, no secrets in them). */
export function lastLines(text: string, n = 3): string {
  return text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !/^debug\d:/.test(l) && !/^Warning: Permanently added/.test(l))
    .slice(-n)
    .join(' / ')
    .slice(0, 600);
}

/** `user@host:port` of the target, as messages name it. */
export function targetWhere(target: SshHostTarget): string {
  const ssh = target.ssh;
  return ssh.configHost ? `${ssh.configHost} (OpenSSH config)` : `${ssh.user}@${ssh.host}:${ssh.port}`;
}

export interface CertificateInfo {
  validFrom: number | null;
  validTo: number | null;
  principals: string[];
}

/**
 * `ssh-keygen -L` output read for what makes a certificate useless: the
 * validity window and the principals (`Valid: forever` and an empty list
 * mean no limit).
 */
export function parseCertificateListing(text: string): CertificateInfo | null {
  if (!/Type: .*certificate/.test(text)) return null;
  const valid = /Valid: (?:from (\S+) to (\S+)|forever|after (\S+)|before (\S+))/.exec(text);
  const when = (s: string | undefined) => (s ? Date.parse(s) : null);
  const principalsBlock = /Principals:\s*\n((?:\s{12,}\S.*\n?)*)/.exec(text)?.[1] ?? '';
  const principals = /Principals: \(none\)/.test(text)
    ? []
    : principalsBlock
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean);
  return {
    validFrom: valid ? when(valid[1] ?? valid[3]) : null,
    validTo: valid ? when(valid[2] ?? valid[4]) : null,
    principals,
  };
}

/** Why the certificate cannot log in as `user` at `now`; null when it can (as far as the client can tell). */
export function certificateProblem(info: CertificateInfo, file: string, user: string, now: number): AppError | null {
  const iso = (t: number) => new Date(t).toISOString().replace('.000Z', 'Z');
  if (info.validTo !== null && Number.isFinite(info.validTo) && now > info.validTo) {
    return new AppError(SshErrorCode.CERTIFICATE_INVALID, `certificate ${file} expired at ${iso(info.validTo)}; ask your SSH CA for a new one`, {
      details: { file, validTo: iso(info.validTo) },
    });
  }
  if (info.validFrom !== null && Number.isFinite(info.validFrom) && now < info.validFrom) {
    return new AppError(SshErrorCode.CERTIFICATE_INVALID, `certificate ${file} is not valid before ${iso(info.validFrom)}`, { details: { file, validFrom: iso(info.validFrom) } });
  }
  if (info.principals.length > 0 && !info.principals.includes(user)) {
    return new AppError(SshErrorCode.CERTIFICATE_INVALID, `certificate ${file} is for ${info.principals.join(', ')}, not for user ${user}`, {
      details: { file, principals: info.principals, user },
    });
  }
  return null;
}
