// The grammar of what a host's SSH settings may hold, checked wherever such
// text enters (the config file, an imported ssh_config, the CLI) and again
// where it is written into an ssh config or a command line. These values end
// up where a shell reads them: OpenSSH runs ProxyJump as
// `/bin/sh -c "exec ssh -l USER -p PORT -J HOPS … -W '[%h]:%p' HOST"`, with
// the jump hops and the target's HostName as they are. So a host is a host
// name or an IP literal, a user a login name, a hop `[user@]host[:port]`:
// nothing a shell, ssh_config's quoting or ssh's %-tokens would read as more.
// Each check answers null (fine) or why not, in words for an error message.
import { isIPv4, isIPv6 } from 'node:net';
import { escapeControls } from '../base/index.js';

// RFC 1123 labels, plus "_": OpenSSH and the system resolver take it, and real
// fleets use it (NetBIOS / Active Directory machine names, Docker Compose
// container names such as proj_gpu_1, lab machines named like
// diag-pv_navi21_001). It is not special to sh, ssh_config or ssh's tokens.
const LABEL = /^[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?$/;
const ALL_DIGITS_AND_DOTS = /^[0-9.]+$/;
// POSIX portable user names (letters, digits, ".", "_", "-", not starting with "-"); 64 covers LDAP/AD accounts.
const USER = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,63}$/;
// A `Host` alias the openssh transport hands ssh as its destination (and ssh as %h and %n).
const ALIAS = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,252}$/;
// eslint-disable-next-line no-control-regex -- control characters are what a path must not hold
const CONTROL = /[\u0000-\u001f\u007f]/;

/** Shown in messages: what a host may be. */
export const HOST_RULE = 'a host name (letters, digits, "-", "_", dots) or an IPv4 or IPv6 address';
export const USER_RULE = 'a login name (letters, digits, ".", "_", "-"; not starting with "-"; at most 64)';

/** `s` in quotes for a message, as written but with control characters shown as escapes; long text cut. */
export function quoted(s: string, max = 120): string {
  return `"${escapeControls(s.length > max ? `${s.slice(0, max)}…` : s)}"`;
}

/** `[v6]` → `v6`: ssh's HostName takes an IPv6 address without brackets. */
export function unbracketHost(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

/** Why `host` is not a host name or an IP address (an IPv6 address may be bracketed); null when it is one. */
export function hostProblem(host: string): string | null {
  const bare = unbracketHost(host);
  const bracketed = bare !== host;
  if (bare === '') return 'must not be empty';
  if (isIPv6(bare) && !bare.includes('%')) return null;
  if (bracketed) return `${quoted(host)} is not an IPv6 address (brackets hold one)`;
  if (isIPv4(bare)) return null;
  if (bare.length > 253) return `${quoted(host, 40)} is longer than 253 characters`;
  const labels = (bare.endsWith('.') ? bare.slice(0, -1) : bare).split('.');
  if (!labels.every((l) => LABEL.test(l))) return `${quoted(host)} is not ${HOST_RULE}`;
  // 010.0.0.1 or 1.2.3.256 is read as an address by some resolvers and as a name by others: neither, here.
  if (ALL_DIGITS_AND_DOTS.test(bare)) return `${quoted(host)} is not ${HOST_RULE} (it looks like an IPv4 address but is not one)`;
  return null;
}

/** Why `user` is not a login name ssh can be given as it is; null when it is one. */
export function userProblem(user: string): string | null {
  if (user === '') return 'must not be empty';
  return USER.test(user) ? null : `${quoted(user)} is not ${USER_RULE}`;
}

export function aliasProblem(alias: string): string | null {
  return ALIAS.test(alias) ? null : `${quoted(alias)} is not an ssh_config Host alias the console can hand ssh (letters, digits, ".", "_", "-"; not starting with "-")`;
}

/** Why `path` cannot be a file path in the config (control characters: NUL, line breaks, ESC…); null when it can. */
export function pathProblem(path: string): string | null {
  if (path === '') return 'must not be empty';
  return CONTROL.test(path) ? `${quoted(path)} holds a control character (a line break, NUL, ESC…)` : null;
}

export interface JumpHop {
  user: string | null;
  /** Without brackets. */
  host: string;
  port: number;
}

const HOP = /^(?:([^@]*)@)?(\[[^\]]*\]|[^:@[\]]*)(?::([^:]*))?$/;

/** One `[user@]host[:port]` hop (host may be `[v6]`), or why it is not one. */
export function parseJumpHop(hop: string): JumpHop | string {
  const m = HOP.exec(hop);
  // ssh splits an unbracketed hop at its first ":", so an IPv6 jump host needs its brackets.
  if (!m) return `${quoted(hop)} is not user@host:port${(hop.match(/:/g) ?? []).length > 1 ? ' (write an IPv6 jump host in brackets: user@[addr]:port)' : ''}`;
  const [, user, host, portText] = m;
  if (user !== undefined) {
    const p = userProblem(user);
    if (p) return `the user of jump hop ${quoted(hop)}: ${p}`;
  }
  const hp = hostProblem(host!);
  if (hp) return `the host of jump hop ${quoted(hop)}: ${hp}`;
  let port = 22;
  if (portText !== undefined) {
    if (!/^\d{1,5}$/.test(portText) || Number(portText) < 1 || Number(portText) > 65535) return `the port of jump hop ${quoted(hop)} must be between 1 and 65535`;
    port = Number(portText);
  }
  return { user: user ?? null, host: unbracketHost(host!), port };
}

/** Why a chain `hop[,hop…]` is not one; null when every hop is `[user@]host[:port]`. */
export function jumpHostProblem(spec: string): string | null {
  if (spec === '') return 'must not be empty';
  for (const hop of spec.split(',')) {
    const parsed = parseJumpHop(hop);
    if (typeof parsed === 'string') return parsed;
  }
  return null;
}
