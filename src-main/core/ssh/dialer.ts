import { lookup } from 'node:dns/promises';
import { isIP, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { AppError } from '../base/index.js';
import { SshErrorCode } from './errors.js';

/** Name → addresses. Injected so tests never ask a real DNS server. */
export type Resolver = (host: string) => Promise<string[]>;

/** Opens the byte stream an SSH handshake runs over. */
export type Dialer = (host: string, port: number, options: { timeoutMs: number }) => Promise<Duplex>;

export const systemResolver: Resolver = async (host) => {
  const found = await lookup(host, { all: true, verbatim: true });
  return found.map((a) => a.address);
};


/**
 * A TCP dialer that resolves through `resolver`, tries each address in turn
 * within one deadline, and sets TCP_NODELAY and TCP keepalive on the socket
 * (interactive requests through a tunnel must not wait for Nagle).
 */
export function tcpDialer(resolver: Resolver = systemResolver): Dialer {
  return async (host, port, { timeoutMs }) => {
    let addresses: string[];
    if (isIP(host)) addresses = [host];
    else {
      try {
        addresses = await resolver(host);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code ?? 'ENOTFOUND';
        throw new AppError(SshErrorCode.HOST_UNRESOLVED, `${host}: the name does not resolve (${code})`, {
          // Retried: a name that does not resolve now may after a VPN or network change.
          retryable: true,
          details: { host, errno: code },
          cause: err,
        });
      }
      if (addresses.length === 0) {
        throw new AppError(SshErrorCode.HOST_UNRESOLVED, `${host}: the name resolves to no address`, { details: { host } });
      }
    }
    const deadline = performance.now() + timeoutMs;
    let last: AppError | null = null;
    for (const address of addresses) {
      const left = deadline - performance.now();
      if (left <= 0) break;
      try {
        return await connectOnce(address, port, left, host);
      } catch (err) {
        last = err as AppError;
      }
    }
    throw (
      last ??
      new AppError(SshErrorCode.TIMEOUT, `${host}:${port}: no TCP connection within ${timeoutMs} ms`, { retryable: true, details: { host, port } })
    );
  };
}

function connectOnce(address: string, port: number, timeoutMs: number, name: string): Promise<Socket> {
  return new Promise<Socket>((resolve, reject) => {
    const sock = new Socket();
    const timer = setTimeout(() => {
      sock.destroy();
      reject(
        new AppError(SshErrorCode.TIMEOUT, `${name}:${port}: no TCP connection within ${timeoutMs} ms`, {
          retryable: true,
          details: { host: name, address, port, timeoutMs },
        }),
      );
    }, timeoutMs);
    sock.once('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      sock.destroy();
      reject(
        new AppError(SshErrorCode.CONNECT_FAILED, `${name}:${port}: ${err.code ?? ''} ${err.message}`.trim(), {
          retryable: true,
          details: { host: name, address, port, errno: err.code ?? null },
          cause: err,
        }),
      );
    });
    sock.connect({ host: address, port }, () => {
      clearTimeout(timer);
      sock.removeAllListeners('error');
      // Until ssh2 takes the socket over, an error must not go unhandled.
      sock.on('error', () => undefined);
      sock.setNoDelay(true);
      sock.setKeepAlive(true, 10_000);
      resolve(sock);
    });
  });
}
