// OpenSSH allowed_signers files (ssh-keygen(1) ALLOWED SIGNERS): the line an
// export writes beside its signature, and the parser that checks a signer
// against a file the verifier trusts.
import { EVIDENCE_SIGNATURE_NAMESPACE } from '../../../src-preload/contract/report.js';
import { AppError } from '../base/index.js';
import { ReportErrorCode } from './errors.js';

// ── allowed_signers ──────────────────────────────────────────────────────

export interface AllowedSigner {
  /** 1-based line in the file. */
  line: number;
  /** Comma-separated principal patterns as written. */
  principals: string[];
  /** `namespaces="…"` patterns; null when the line has none (any namespace). */
  namespaces: string[] | null;
  certAuthority: boolean;
  /** Every option as written, lower-cased names; flags map to true. */
  options: Record<string, string | true>;
  keyType: string;
  /** `type base64`, without comment. */
  publicKeyLine: string;
}

// eslint-disable-next-line no-control-regex
const PRINCIPAL_FORBIDDEN = /[",\u0000-\u001f\u007f]/;

/**
 * One allowed_signers line limiting `publicKeyLine` to the evidence namespace.
 * A principal with spaces (a display name) is quoted, as OpenSSH reads it;
 * quotes, commas (they would split the pattern list) and control characters
 * are refused with SIGNER_PRINCIPAL_INVALID.
 */
export function allowedSignersLine(principal: string, publicKeyLine: string, namespace: string = EVIDENCE_SIGNATURE_NAMESPACE): string {
  if (!principal.trim() || PRINCIPAL_FORBIDDEN.test(principal)) {
    throw new AppError(
      ReportErrorCode.SIGNER_PRINCIPAL_INVALID,
      `signer principal ${JSON.stringify(principal)} cannot go into allowed_signers (it must be non-empty, without quotes, commas or control characters)`,
      { details: { principal } },
    );
  }
  const [type, b64] = publicKeyLine.trim().split(/\s+/);
  const field = /\s/.test(principal) || principal.startsWith('#') ? `"${principal}"` : principal;
  return `${field} namespaces="${namespace}" ${type} ${b64}`;
}

/** Parses an allowed_signers file (ssh-keygen(1) "ALLOWED SIGNERS"); lines it cannot read are skipped. */
export function parseAllowedSigners(text: string): AllowedSigner[] {
  const out: AllowedSigner[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const entry = parseAllowedSignersLine(raw, i + 1);
    if (entry) out.push(entry);
  });
  return out;
}

function parseAllowedSignersLine(raw: string, line: number): AllowedSigner | null {
  let rest = raw.trim();
  if (!rest || rest.startsWith('#')) return null;
  const first = takeToken(rest);
  if (!first) return null;
  const principals = unquote(first.token).split(',').filter(Boolean);
  rest = first.rest;
  let options: Record<string, string | true> = {};
  let next = takeToken(rest);
  if (!next) return null;
  if (!isKeyType(next.token)) {
    const parsed = parseOptions(next.token);
    if (!parsed) return null;
    options = parsed;
    rest = next.rest;
    next = takeToken(rest);
    if (!next) return null;
  }
  const keyType = next.token;
  const keyData = takeToken(next.rest);
  if (!isKeyType(keyType) || !keyData || !/^[A-Za-z0-9+/]+={0,2}$/.test(keyData.token)) return null;
  const ns = options['namespaces'];
  return {
    line,
    principals,
    namespaces: typeof ns === 'string' ? ns.split(',').filter(Boolean) : null,
    certAuthority: options['cert-authority'] === true,
    options,
    keyType,
    publicKeyLine: `${keyType} ${keyData.token}`,
  };
}

/**
 * The first entry that lists this key (not as a CA) for `namespace`, or null.
 * Principals are not matched: the caller says which principals it found.
 */
export function findAllowedSigner(entries: readonly AllowedSigner[], publicKeyLine: string, namespace: string): AllowedSigner | null {
  const want = keyBlob(publicKeyLine);
  if (!want) return null;
  for (const entry of entries) {
    if (entry.certAuthority) continue;
    const blob = keyBlob(entry.publicKeyLine);
    if (!blob || !blob.equals(want)) continue;
    if (entry.namespaces && !entry.namespaces.some((p) => globMatch(p, namespace))) continue;
    return entry;
  }
  return null;
}

function keyBlob(publicKeyLine: string): Buffer | null {
  const b64 = publicKeyLine.trim().split(/\s+/)[1];
  return b64 ? Buffer.from(b64, 'base64') : null;
}

function isKeyType(token: string): boolean {
  return /^(ssh-ed25519|ssh-rsa|ssh-dss|ecdsa-sha2-nistp(256|384|521)|sk-[a-z0-9@.-]+)(-cert-v01@openssh\.com)?$/.test(token);
}

/** A whitespace-delimited token; double quotes keep spaces inside it. */
function takeToken(text: string): { token: string; rest: string } | null {
  const s = text.trimStart();
  if (!s) return null;
  let i = 0;
  let quoted = false;
  while (i < s.length && (quoted || !/\s/.test(s[i]!))) {
    if (s[i] === '"') quoted = !quoted;
    i++;
  }
  if (quoted) return null;
  return { token: s.slice(0, i), rest: s.slice(i) };
}

function unquote(token: string): string {
  return token.length >= 2 && token.startsWith('"') && token.endsWith('"') ? token.slice(1, -1) : token;
}

/** `name="value",flag,...` → map; null when the quoting is broken. */
function parseOptions(token: string): Record<string, string | true> | null {
  const out: Record<string, string | true> = {};
  const re = /([A-Za-z0-9_-]+)(?:="([^"]*)")?(,|$)/y;
  let m: RegExpExecArray | null;
  while (re.lastIndex < token.length && (m = re.exec(token))) {
    out[m[1]!.toLowerCase()] = m[2] ?? true;
  }
  return re.lastIndex === token.length ? out : null;
}

/** OpenSSH match_pattern: `*` and `?`, with a leading `!` negating (treated as no match). */
function globMatch(pattern: string, value: string): boolean {
  if (pattern.startsWith('!')) return false;
  const re = new RegExp('^' + pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.') + '$');
  return re.test(value);
}
