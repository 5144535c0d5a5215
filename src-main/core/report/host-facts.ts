// What a host's own tools say about it, parsed for the evidence report's
// checks: listening sockets (`ss -ltn`) and the effective sshd settings
// (`sshd -T`), with the verdicts drawn from them. Pure functions.
import type { Check } from '../../../src-preload/contract/index.js';

// ── ss ────────────────────────────────────────────────────────────────────

export type BindScope = 'loopback' | 'wildcard' | 'other';

export interface SsListener {
  /** The line as ss printed it (whitespace collapsed). */
  line: string;
  /** Without brackets or interface: `127.0.0.1`, `::1`, `0.0.0.0`, `::`, `*`. */
  address: string;
  /** The `%iface` suffix (`lo`), or null. */
  iface: string | null;
  port: number;
  scope: BindScope;
}

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

export function bindScope(address: string, iface: string | null): BindScope {
  const a = address.toLowerCase();
  // A socket bound to the loopback device is reachable from this host only, whatever its address.
  if (iface === 'lo') return 'loopback';
  if (a === '*' || a === '0.0.0.0' || a === '::' || /^(0{1,4}:){7}0{1,4}$/.test(a)) return 'wildcard';
  if (IPV4.exec(a)?.[1] === '127') return 'loopback';
  if (a === '::1' || /^(0{1,4}:){7}0{0,3}1$/.test(a)) return 'loopback';
  const mapped = /^::ffff:(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})$/.exec(a);
  if (mapped) return bindScope(mapped[1]!, null);
  return 'other';
}

/** `127.0.0.1:8000`, `127.0.0.53%lo:53`, `[::1]:8000`, `[fe80::1]%eth0:22`, `*:8000`, old ss's `:::22`; null for peers (`*`) and names. */
export function parseSocketAddress(token: string): { address: string; iface: string | null; port: number } | null {
  const m = /^(.+):(\d{1,5})$/.exec(token);
  if (!m) return null;
  let host = m[1]!;
  const port = Number(m[2]);
  if (port > 65535) return null;
  let iface: string | null = null;
  if (host.startsWith('[')) {
    const b = /^\[([^\]]+)\](?:%(.+))?$/.exec(host);
    if (!b) return null;
    host = b[1]!;
    iface = b[2] ?? null;
  }
  const pct = host.indexOf('%');
  if (pct >= 0) {
    iface = host.slice(pct + 1) || null;
    host = host.slice(0, pct);
  }
  if (host === '*' || IPV4.test(host) || (host.includes(':') && /^[0-9A-Fa-f:.]+$/.test(host))) return { address: host, iface, port };
  return null;
}

/** The listening sockets of `ss -ltn` / `ss -ltnH` output (header, blank and unreadable lines skipped). */
export function parseSsListeners(text: string): SsListener[] {
  const out: SsListener[] = [];
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim().replace(/\s+/g, ' ');
    if (line === '' || /^(State|Netid|Recv-Q)\b/.test(line)) continue;
    // The local address is the first token that ends in a numeric port (the peer ends in `:*`).
    for (const token of line.split(' ')) {
      const addr = parseSocketAddress(token);
      if (!addr) continue;
      out.push({ line, ...addr, scope: bindScope(addr.address, addr.iface) });
      break;
    }
  }
  return out;
}

// ── sshd -T ───────────────────────────────────────────────────────────────

/** `sshd -T` output: lower-case keyword → first value (later repeats, e.g. listenaddress, are dropped). */
export function parseSshdConfig(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const raw of text.split(/\r?\n/)) {
    const m = /^\s*([A-Za-z][A-Za-z0-9]*)\s+(.*?)\s*$/.exec(raw);
    if (!m) continue;
    const key = m[1]!.toLowerCase();
    if (!out.has(key)) out.set(key, m[2]!.toLowerCase());
  }
  return out;
}

/** A verdict and what was seen. */
export type Measured = { verdict: Check['verdict']; evidence: string };

export function passwordAuthVerdict(cfg: ReadonlyMap<string, string>, source: string): Measured {
  const pa = cfg.get('passwordauthentication');
  // Older OpenSSH names keyboard-interactive "challengeresponseauthentication".
  const kbdKey = cfg.has('kbdinteractiveauthentication') ? 'kbdinteractiveauthentication' : 'challengeresponseauthentication';
  const kbd = cfg.get(kbdKey);
  const pam = cfg.get('usepam');
  if (pa === 'yes') return { verdict: 'fail', evidence: `${source}: passwordauthentication yes` };
  if (pa !== 'no') return { verdict: 'unverified', evidence: `${source} printed no passwordauthentication line` };
  if (kbd === 'yes' && pam === 'yes') {
    return {
      verdict: 'fail',
      evidence: `${source}: passwordauthentication no, but ${kbdKey} yes with usepam yes: PAM can still ask for a password`,
    };
  }
  return { verdict: 'pass', evidence: `${source}: passwordauthentication no${kbd ? `, ${kbdKey} ${kbd}` : ''}` };
}

export function rootLoginVerdict(cfg: ReadonlyMap<string, string>, source: string): Measured {
  const v = cfg.get('permitrootlogin');
  const seen = `${source}: permitrootlogin ${v ?? ''}`.trim();
  switch (v) {
    case 'no':
      return { verdict: 'pass', evidence: `${seen} (root cannot log in over SSH)` };
    case 'prohibit-password':
    case 'without-password':
      return { verdict: 'pass', evidence: `${seen} (root only with a key, never a password)` };
    case 'forced-commands-only':
      return { verdict: 'pass', evidence: `${seen} (root only with a key, and only for its forced command)` };
    case 'yes':
      return { verdict: 'fail', evidence: `${seen} (root may log in with a password)` };
    default:
      return { verdict: 'unverified', evidence: v === undefined ? `${source} printed no permitrootlogin line` : `${seen}: value not understood` };
  }
}
