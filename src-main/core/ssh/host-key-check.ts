// Host-key trust for one session: which key types to ask for, the verdict on a
// presented key (known_hosts first, then the operator's confirmations), what is
// reported when it is not trusted, and which operator decisions are allowed.
import { readFile } from 'node:fs/promises';
import { AppError } from '../base/index.js';
import { SshErrorCode } from './errors.js';
import { isSha256Fingerprint } from './fingerprint.js';
import { KnownHosts, knownHostsName, type HostKeyVerdict } from './known-hosts.js';
import type { HostKeyProblem, SshConnectionState } from './session.js';
import type { HostKeyTrustStore } from './trust-store.js';

const HOST_KEY_ALGORITHMS: Record<string, string[]> = {
  'ssh-ed25519': ['ssh-ed25519'],
  'ecdsa-sha2-nistp256': ['ecdsa-sha2-nistp256'],
  'ecdsa-sha2-nistp384': ['ecdsa-sha2-nistp384'],
  'ecdsa-sha2-nistp521': ['ecdsa-sha2-nistp521'],
  'ssh-rsa': ['rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa'],
};
const DEFAULT_HOST_KEY_ORDER = Object.values(HOST_KEY_ALGORITHMS).flat();

/** A verdict on the key a hop presented, with where a known key came from. */
export type JudgedHostKey = HostKeyVerdict & { keyType: string; source?: 'known_hosts' | 'console' };

/** Key types already known for the endpoint first, so a host with several keys shows the one we can check. */
export function hostKeyOrder(knownHosts: KnownHosts, trustStore: HostKeyTrustStore, host: string, port: number): string[] {
  const knownTypes = [...knownHosts.keyTypesFor(host, port), ...trustStore.lookup(knownHostsName(host, port)).map((t) => t.keyType)];
  const preferred = knownTypes.flatMap((t) => HOST_KEY_ALGORITHMS[t] ?? []);
  return [...new Set([...preferred, ...DEFAULT_HOST_KEY_ORDER])];
}

function keyTypeOf(blob: Buffer): string {
  if (blob.length < 4) return 'unknown';
  const len = blob.readUInt32BE(0);
  return blob.subarray(4, 4 + Math.min(len, 64)).toString('latin1');
}

/** known_hosts first (authoritative); then keys the operator confirmed in the console. */
export function judgeHostKey(knownHosts: KnownHosts, trustStore: HostKeyTrustStore, host: string, port: number, key: Buffer): JudgedHostKey {
  const keyType = keyTypeOf(key);
  const v = knownHosts.check(host, port, key);
  if (v.status !== 'unknown') return { ...v, source: 'known_hosts', keyType };
  const stored = trustStore.lookup(knownHostsName(host, port));
  if (stored.length === 0) return { ...v, keyType };
  if (stored.some((s) => s.fingerprint === v.fingerprint)) return { status: 'trusted', fingerprint: v.fingerprint, keyType };
  return { status: 'changed', fingerprint: v.fingerprint, knownFingerprints: [...new Set(stored.map((s) => s.fingerprint))], source: 'console', keyType };
}

/** What the session reports, and throws, for a key it did not accept. `where` names the hop (`jump host user@host:port`). */
export function hostKeyRefusal(
  verdict: Exclude<JudgedHostKey, { status: 'trusted' }>,
  role: 'host' | 'jump',
  endpoint: string,
  where: string,
): { problem: HostKeyProblem; error: AppError } {
  const known = verdict.status === 'changed' ? verdict.knownFingerprints : [];
  const problem: HostKeyProblem = {
    status: verdict.status,
    role,
    endpoint,
    keyType: verdict.keyType,
    fingerprint: verdict.fingerprint,
    knownFingerprints: known,
    knownSource: verdict.source ?? null,
  };
  const details = { fingerprint: verdict.fingerprint, endpoint, role, keyType: verdict.keyType };
  if (verdict.status === 'unknown') {
    const error = new AppError(SshErrorCode.HOST_KEY_UNKNOWN, `${where}: host key ${verdict.fingerprint} (${verdict.keyType}) is not known; confirm it to connect`, {
      details,
    });
    return { problem, error };
  }
  if (verdict.status === 'changed') {
    const error = new AppError(
      SshErrorCode.HOST_KEY_CHANGED,
      `${where}: HOST KEY CHANGED — presented ${verdict.fingerprint}, ${verdict.source === 'console' ? 'confirmed earlier in the console' : 'known_hosts has'} ${known.join(', ')}. Refusing to connect; someone may be intercepting the connection, or the host was reinstalled.`,
      { details: { ...details, knownFingerprints: known, knownSource: verdict.source ?? 'known_hosts' } },
    );
    return { problem, error };
  }
  return { problem, error: new AppError(SshErrorCode.HOST_KEY_REVOKED, `${where}: host key ${verdict.fingerprint} is marked @revoked`, { details }) };
}

/** A missing file is an empty known_hosts; an unreadable one is an error, not silence. */
export async function loadKnownHosts(file: string): Promise<KnownHosts> {
  try {
    return KnownHosts.parse(await readFile(file, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return KnownHosts.empty();
    throw new AppError(SshErrorCode.KNOWN_HOSTS_UNREADABLE, `cannot read ${file}: ${(err as Error).message}`, {
      details: { file },
      cause: err,
    });
  }
}

/**
 * Whether the operator may confirm `fingerprint` now: only an unknown key, and
 * only the one presented; with nothing pending, any well-formed fingerprint.
 * A changed or revoked key is never trusted from the console.
 */
export function assertTrustable(problem: HostKeyProblem | null, fingerprint: string): void {
  if (!isSha256Fingerprint(fingerprint)) {
    throw new AppError(SshErrorCode.INVALID_FINGERPRINT, `not a SHA256 fingerprint: ${fingerprint}`);
  }
  if (problem && problem.status !== 'unknown') {
    throw new AppError(
      SshErrorCode.HOST_KEY_CHANGED,
      `${problem.endpoint}: the host key is ${problem.status}; it cannot be trusted from the console (known: ${problem.knownFingerprints.join(', ') || 'revoked'})`,
      { details: { ...problem } },
    );
  }
  if (problem && problem.fingerprint !== fingerprint) {
    throw new AppError(
      SshErrorCode.FINGERPRINT_MISMATCH,
      `${problem.endpoint} presented ${problem.fingerprint}, not ${fingerprint}; nothing was trusted`,
      { details: { presented: problem.fingerprint, given: fingerprint } },
    );
  }
}

/** Whether the operator may refuse `fingerprint` now (the session must be waiting on that very key); the refusal error to report. */
export function refusalOf(problem: HostKeyProblem | null, state: SshConnectionState, label: string, fingerprint: string): AppError {
  if (!problem || state !== 'awaiting-trust') {
    throw new AppError(SshErrorCode.NOTHING_TO_TRUST, `${label} is not waiting for a host-key decision (state ${state})`);
  }
  if (problem.fingerprint !== fingerprint) {
    throw new AppError(SshErrorCode.FINGERPRINT_MISMATCH, `${problem.endpoint} presented ${problem.fingerprint}, not ${fingerprint}`, {
      details: { presented: problem.fingerprint, given: fingerprint },
    });
  }
  return new AppError(SshErrorCode.TRUST_REFUSED, `${problem.endpoint}: the operator refused host key ${fingerprint}`, {
    details: { endpoint: problem.endpoint, fingerprint },
  });
}
