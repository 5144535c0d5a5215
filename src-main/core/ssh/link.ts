// The SSH link of one connect attempt: known_hosts and credentials, the dial,
// the optional jump-host hop (a direct-tcpip channel from it to the target),
// the host's handshake; and tearing a link's clients down with a deadline.
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import type { Client } from 'ssh2';
import { AppError, systemClock, toAppError, type Clock, type Disposable, type Logger } from '../base/index.js';
import { loadCredentials } from './credentials.js';
import type { Dialer } from './dialer.js';
import { SshErrorCode } from './errors.js';
import { openForwardChannel } from './forward-channel.js';
import { handshake, type ClientError, type HandshakeContext, type Hop } from './handshake.js';
import { loadKnownHosts } from './host-key-check.js';
import { parseJumpHost } from './jump.js';
import type { PassphraseProvider } from './passphrases.js';
import type { SshHostTarget } from './session.js';
import { assertBuiltinCan } from './transport.js';

export interface LinkContext extends HandshakeContext {
  target: SshHostTarget;
  clock: Clock;
  /** Home folder for the default `~/.ssh/known_hosts`. */
  homeDir?: string;
  env: Readonly<Record<string, string | undefined>>;
  dialer(): Dialer;
  passphrases(): PassphraseProvider;
}

export interface Link {
  client: Client;
  /** The jump host's client when the link goes through one; closing either ends the link. */
  jumpClient: Client | null;
  /** What the target's SSH stream runs over (the TCP socket, or the channel through the jump host). */
  sock: Duplex;
}

/** Opens the link; null when the attempt was superseded on the way (what it had opened is closed). */
export async function openLink(ctx: LinkContext): Promise<Link | null> {
  const { ssh } = ctx.target;
  assertBuiltinCan(ctx.target.label, ssh);
  const jump = ssh.jumpHost ? parseJumpHost(ssh.jumpHost) : null;
  const knownHosts = await loadKnownHosts(ctx.target.knownHostsFile ?? join(ctx.homeDir ?? homedir(), '.ssh', 'known_hosts'));
  const creds = await loadCredentials(ssh, ctx.env, ctx.passphrases());
  if (!ctx.isCurrent()) return null;

  let jumpClient: Client | null = null;
  let sock: Duplex;
  if (jump) {
    const hop: Hop = { role: 'jump', host: jump.host, port: jump.port, user: jump.user ?? ssh.user };
    const jsock = await dialHop(ctx.dialer(), hop, ctx.readyTimeoutMs);
    jumpClient = await handshake(ctx, hop, jsock, knownHosts, creds);
    sock = await throughJump(ctx, jumpClient, hop);
  } else {
    sock = await dialHop(ctx.dialer(), { role: 'host', host: ssh.host, port: ssh.port, user: ssh.user }, ctx.readyTimeoutMs);
  }
  if (!ctx.isCurrent()) {
    sock.destroy();
    jumpClient?.end();
    return null;
  }
  const client = await handshake(ctx, { role: 'host', host: ssh.host, port: ssh.port, user: ssh.user }, sock, knownHosts, creds).catch((err: unknown) => {
    jumpClient?.end();
    throw err;
  });
  if (!ctx.isCurrent()) {
    client.end();
    jumpClient?.end();
    return null;
  }
  return { client, jumpClient, sock };
}

async function dialHop(dialer: Dialer, hop: Hop, timeoutMs: number): Promise<Duplex> {
  try {
    return await dialer(hop.host, hop.port, { timeoutMs });
  } catch (err) {
    const e = toAppError(err, SshErrorCode.CONNECT_FAILED);
    if (hop.role === 'host') throw e;
    throw new AppError(e.code, `jump host ${hop.host}:${hop.port}: ${e.message}`, { retryable: e.retryable, details: { ...e.details, role: 'jump' }, cause: e });
  }
}

/** The target's socket: a channel from the jump host to it (the jump client is ended if that fails). */
async function throughJump(ctx: LinkContext, jumpClient: Client, hop: Hop): Promise<Duplex> {
  const { ssh } = ctx.target;
  try {
    return await openForwardChannel(jumpClient, ctx.clock, '127.0.0.1', 0, ssh.host, ssh.port, ctx.readyTimeoutMs);
  } catch (err) {
    jumpClient.end();
    const e = toAppError(err);
    throw new AppError(SshErrorCode.JUMP_FAILED, `jump host ${hop.user}@${hop.host}:${hop.port} could not reach ${ssh.host}:${ssh.port}: ${e.message}`, {
      retryable: true,
      // The cause's code tells a timeout on the way from a refusal (ssh/recovery.ts).
      details: { jumpHost: ssh.jumpHost, host: ssh.host, port: ssh.port, causeCode: e.code },
      cause: err,
    });
  }
}

/**
 * Watches an adopted link: keeps the first error either client reports and
 * calls `onLost` with it when a client closes (once per client). Returns
 * promises that settle as each client closes.
 */
export function watchLink(link: Link, logger: Logger, onLost: (lastError: ClientError | null) => void): Promise<void>[] {
  const { client, jumpClient } = link;
  let lastError: ClientError | null = null;
  client.on('error', (err: ClientError) => {
    lastError ??= err;
    logger.debug('client error', { level: err.level, message: err.message });
  });
  const closed = [new Promise<void>((resolve) => client.once('close', () => resolve()))];
  client.once('close', () => onLost(lastError));
  if (jumpClient) {
    jumpClient.on('error', (err: ClientError) => (lastError ??= err));
    closed.push(new Promise<void>((resolve) => jumpClient.once('close', () => resolve())));
    jumpClient.once('close', () => onLost(lastError));
  }
  return closed;
}

/** Ends the clients and waits for them to close, destroying them after 1 s. */
export async function endClients(clients: Client[], closedPromises: Promise<void>[]): Promise<void> {
  const closed = Promise.all(closedPromises);
  for (const c of clients) {
    try {
      c.end();
    } catch {
      // already gone
    }
  }
  // Real time on purpose: the socket is real whatever clock drives the session logic.
  let timer: Disposable | undefined;
  const forced = new Promise<void>((resolve) => {
    timer = systemClock.setTimeout(() => {
      for (const c of clients) c.destroy();
      resolve();
    }, 1_000);
  });
  await Promise.race([closed, forced]);
  await timer?.dispose();
}
