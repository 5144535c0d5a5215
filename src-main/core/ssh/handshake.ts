// One SSH handshake over a socket already dialled: the host key is judged in
// ssh2's hostVerifier before any credential is offered, then the credentials in
// order; a failed handshake becomes one coded error naming the hop.
import type { Duplex } from 'node:stream';
import ssh2 from 'ssh2';
import type { Client, ConnectConfig } from 'ssh2';
import { AppError, type Logger } from '../base/index.js';
import { authFailure, authFor, authMethods, type AuthMethodName, type Credentials } from './credentials.js';
import { SshErrorCode } from './errors.js';
import { hostKeyOrder, hostKeyRefusal, judgeHostKey, type JudgedHostKey } from './host-key-check.js';
import { knownHostsName, type KnownHosts } from './known-hosts.js';
import type { HostKeyProblem, SshClientFactory } from './session.js';
import type { HostKeyTrustStore } from './trust-store.js';

export interface Hop {
  role: 'host' | 'jump';
  host: string;
  port: number;
  user: string;
}

export type ClientError = Error & { level?: string; code?: string };

/** What a handshake needs from its session (read per use, so late-installed services apply). */
export interface HandshakeContext {
  clientFactory?: SshClientFactory;
  readyTimeoutMs: number;
  keepaliveIntervalMs: number;
  keepaliveCountMax: number;
  logger: Logger;
  trustStore(): HostKeyTrustStore;
  /** False once the attempt was superseded (disconnect, reconnect): a trusted key is then still refused. */
  isCurrent(): boolean;
  /** Clients still handshaking, so the session can cut them short. */
  handshaking: Set<Client>;
  /** The host's (not the jump host's) key fingerprint, once seen. */
  onHostFingerprint(fingerprint: string): void;
  onHostKeyProblem(problem: HostKeyProblem): void;
}

/** Host key checked first, then (only if trusted) the credentials. Resolves with the ready client. */
export function handshake(ctx: HandshakeContext, hop: Hop, sock: Duplex, knownHosts: KnownHosts, creds: Credentials): Promise<Client> {
  const client = (ctx.clientFactory ?? (() => new ssh2.Client()))();
  ctx.handshaking.add(client);
  const methods = authMethods(creds);
  const tried: AuthMethodName[] = [];
  let verdict: JudgedHostKey | null = null;
  let firstError: ClientError | null = null;
  const hostKeyAlgorithms = hostKeyOrder(knownHosts, ctx.trustStore(), hop.host, hop.port);

  return new Promise<Client>((resolve, reject) => {
    let ready = false;
    client.on('ready', () => {
      ready = true;
      ctx.handshaking.delete(client);
      if (hop.role === 'host' && verdict) ctx.onHostFingerprint(verdict.fingerprint);
      resolve(client);
    });
    client.on('error', (err: ClientError) => {
      // The first error is the cause; ssh2 may add "connection lost" ones while tearing down.
      firstError ??= err;
      ctx.logger.debug('handshake error', { role: hop.role, level: err.level, message: err.message });
    });
    client.once('close', () => {
      ctx.handshaking.delete(client);
      if (ready) return;
      reject(handshakeFailure(ctx, hop, verdict, firstError, tried, creds));
    });

    const config: ConnectConfig = {
      sock,
      host: hop.host,
      port: hop.port,
      username: hop.user,
      readyTimeout: ctx.readyTimeoutMs,
      keepaliveInterval: ctx.keepaliveIntervalMs,
      keepaliveCountMax: ctx.keepaliveCountMax,
      algorithms: { serverHostKey: hostKeyAlgorithms as NonNullable<ConnectConfig['algorithms']>['serverHostKey'] },
      hostVerifier: (key: Buffer, verify: (ok: boolean) => void) => {
        verdict = judgeHostKey(knownHosts, ctx.trustStore(), hop.host, hop.port, key);
        if (hop.role === 'host') ctx.onHostFingerprint(verdict.fingerprint);
        verify(verdict.status === 'trusted' && ctx.isCurrent());
      },
      authHandler: (_left, _partial, next) => {
        const method = methods[tried.length];
        if (!method) {
          next(false as never);
          return;
        }
        tried.push(method);
        next(authFor(method, hop.user, creds));
      },
    };
    try {
      client.connect(config);
    } catch (err) {
      // ssh2 throws synchronously on bad config; nothing was sent.
      ctx.handshaking.delete(client);
      sock.destroy();
      reject(new AppError(SshErrorCode.CONNECT_FAILED, `could not start SSH: ${(err as Error).message}`, { cause: err }));
    }
  });
}

function handshakeFailure(ctx: HandshakeContext, hop: Hop, verdict: JudgedHostKey | null, err: ClientError | null, tried: string[], creds: Credentials): AppError {
  const where = `${hop.role === 'jump' ? 'jump host ' : ''}${hop.user}@${hop.host}:${hop.port}`;
  if (verdict && verdict.status !== 'trusted') {
    const { problem, error } = hostKeyRefusal(verdict, hop.role, knownHostsName(hop.host, hop.port), where);
    ctx.onHostKeyProblem(problem);
    return error;
  }
  const level = err?.level;
  if (level === 'client-authentication') return authFailure(where, hop.role, tried, creds, err);
  if (level === 'client-timeout') {
    return new AppError(SshErrorCode.TIMEOUT, `${where}: no SSH handshake within ${ctx.readyTimeoutMs} ms`, {
      retryable: true,
      details: { role: hop.role },
      cause: err,
    });
  }
  const code = err?.code;
  return new AppError(SshErrorCode.CONNECT_FAILED, `${where}: ${code ? `${code} ` : ''}${err?.message ?? 'connection closed during handshake'}`, {
    retryable: true,
    details: { role: hop.role, ...(code ? { errno: code } : {}) },
    cause: err ?? undefined,
  });
}
