// Whether a link that is down is expected back by itself, as the session knows
// it: the kind of its last failure (a timeout, a reset, a dropped link pass; a
// refused connection, a failed login, a key problem do not) and how many
// attempts in a row failed. The proxy holds requests only on this (issue #33):
// it reads the typed expectation, never the error's words.
import type { AppError } from '../base/index.js';
import { SshErrorCode } from './errors.js';

/** What the last failure of a link was, from its coded error (and the socket's errno where it has one). */
export type LinkFailureKind =
  /** No TCP connection or no handshake within the deadline. */
  | 'timeout'
  /** The connection was reset or closed while it was being set up. */
  | 'reset'
  /** A link that was up went away (keepalive, the peer closed it, the console found it dead). */
  | 'dropped'
  /** No route to the host right now (a cable, a VPN, an interface going down). */
  | 'unreachable'
  /** The host answered that nothing listens on the SSH port (sshd down): ECONNREFUSED. */
  | 'refused'
  /** The host's name does not resolve. */
  | 'unresolved'
  /** The host refused the credentials, or the console has none it can use. */
  | 'auth'
  /** The host key is unknown, changed, revoked or refused. */
  | 'host-key'
  /** Anything else: not expected to pass by itself. */
  | 'other';

/** Failures that pass by themselves (field notes §3: a cut link comes back; a stopped sshd does not). */
const TRANSIENT: ReadonlySet<LinkFailureKind> = new Set(['timeout', 'reset', 'dropped', 'unreachable']);

/** Transient failures in a row after which a recovery is no longer expected (the session's default). */
export const DEFAULT_TRANSIENT_FAILURES_MAX = 3;

export interface RecoveryExpectation {
  /** `transient`: expected back by itself; `hard`: not expected (the console still retries on its backoff). */
  readonly outlook: 'transient' | 'hard';
  /** The last failure's kind; null before any (the first attempt runs). */
  readonly lastFailure: LinkFailureKind | null;
  /** Attempts that failed since the link was last up. */
  readonly failuresInRow: number;
  /** Why hard: the failure's own kind, or `repeated` (too many transient failures in a row); null when transient. */
  readonly hardBecause: LinkFailureKind | 'repeated' | null;
  /** Epoch ms of the next automatic attempt; null while one runs, or when none will. */
  readonly nextAttemptAt: number | null;
}

const ERRNO_KIND: Readonly<Record<string, LinkFailureKind>> = {
  ECONNREFUSED: 'refused',
  ECONNRESET: 'reset',
  ECONNABORTED: 'reset',
  EPIPE: 'reset',
  ETIMEDOUT: 'timeout',
  EHOSTUNREACH: 'unreachable',
  ENETUNREACH: 'unreachable',
  ENETDOWN: 'unreachable',
  EHOSTDOWN: 'unreachable',
};

const AUTH_CODES: ReadonlySet<string> = new Set([
  SshErrorCode.AUTH_FAILED,
  SshErrorCode.NO_AUTH_METHOD,
  SshErrorCode.PASSPHRASE_REQUIRED,
  SshErrorCode.PASSPHRASE_INCORRECT,
  SshErrorCode.KEY_UNREADABLE,
  SshErrorCode.KEY_NOT_A_FILE,
  SshErrorCode.KEY_TOO_LARGE,
  SshErrorCode.CERTIFICATE_INVALID,
]);

const HOST_KEY_CODES: ReadonlySet<string> = new Set([
  SshErrorCode.HOST_KEY_UNKNOWN,
  SshErrorCode.HOST_KEY_CHANGED,
  SshErrorCode.HOST_KEY_REVOKED,
  SshErrorCode.KNOWN_HOSTS_UNREADABLE,
  SshErrorCode.TRUST_REFUSED,
]);

/** The kind of a link failure, from its code and the errno the dial or handshake recorded in its details. */
export function failureKindOf(err: AppError): LinkFailureKind {
  const errno = typeof err.details['errno'] === 'string' ? err.details['errno'] : null;
  switch (err.code) {
    case SshErrorCode.TIMEOUT:
      return 'timeout';
    case SshErrorCode.DISCONNECTED:
      return 'dropped';
    case SshErrorCode.HOST_UNRESOLVED:
      return 'unresolved';
    case SshErrorCode.CONNECT_FAILED:
      // No errno: the peer closed the connection during the handshake (sshd restarting, MaxStartups).
      return errno === null ? 'reset' : (ERRNO_KIND[errno] ?? 'other');
    case SshErrorCode.JUMP_FAILED:
      // The jump host is up and answered that it cannot reach the target: a refusal unless it timed out.
      return err.details['causeCode'] === SshErrorCode.TIMEOUT ? 'timeout' : errno !== null ? (ERRNO_KIND[errno] ?? 'refused') : 'refused';
    default:
      if (AUTH_CODES.has(err.code)) return 'auth';
      if (HOST_KEY_CODES.has(err.code)) return 'host-key';
      return 'other';
  }
}

/**
 * The expectation for a link that is down: transient while its last failure passes by itself and
 * fewer than `transientFailuresMax` attempts in a row failed; hard otherwise.
 */
export function expectRecovery(
  lastFailure: LinkFailureKind | null,
  failuresInRow: number,
  nextAttemptAt: number | null,
  transientFailuresMax: number = DEFAULT_TRANSIENT_FAILURES_MAX,
): RecoveryExpectation {
  const hardBecause: RecoveryExpectation['hardBecause'] =
    lastFailure !== null && !TRANSIENT.has(lastFailure) ? lastFailure : failuresInRow >= transientFailuresMax ? 'repeated' : null;
  return { outlook: hardBecause === null ? 'transient' : 'hard', lastFailure, failuresInRow, hardBecause, nextAttemptAt };
}
