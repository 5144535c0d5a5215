// The console reaches its own tunnels by name, not by port. A tunnel's private
// end is a Unix socket in a 0700 folder (no other local user can connect), and
// the console's HTTP clients address it as http://<id>.tunnel.gpu-console.invalid:
// `.invalid` never resolves (RFC 6761), so such a URL reaches the socket through
// the one connector (core/upstream-dispatch.ts) or nothing at all.
//
// One registry per process (`tunnelHosts`): the connector and the on-prem guard
// are reached from a dozen dispatcher sites across capabilities, and until one
// UpstreamClient makes them all, a registry handed through each would touch
// every constructor between app.ts and those sites. It stays small and
// collision-free instead: names are 96 random bits, made and dropped by the
// tunnel that owns the socket; tests and several consoles in one process never
// see each other's entries.
import { randomBytes } from 'node:crypto';

export const TUNNEL_HOST_SUFFIX = '.tunnel.gpu-console.invalid';

/** True for any name under the tunnels' reserved domain, registered or not (never for DNS). */
export function isTunnelHostName(host: string): boolean {
  return host.toLowerCase().endsWith(TUNNEL_HOST_SUFFIX);
}

export interface TunnelHostEntry {
  /** `<id>.tunnel.gpu-console.invalid` */
  readonly host: string;
  /** `http://<host>` (no port, no path). */
  readonly url: string;
  /** Unregisters the name: a later connect to it fails with a coded error. */
  dispose(): void;
}

export class TunnelHosts {
  private readonly paths = new Map<string, string>();

  /** A fresh name for the socket at `socketPath`. */
  register(socketPath: string): TunnelHostEntry {
    const host = `${randomBytes(12).toString('hex')}${TUNNEL_HOST_SUFFIX}`;
    this.paths.set(host, socketPath);
    return {
      host,
      url: `http://${host}`,
      dispose: () => {
        if (this.paths.get(host) === socketPath) this.paths.delete(host);
      },
    };
  }

  /** The socket a registered name stands for; null for any other name. */
  socketPathOf(host: string): string | null {
    return this.paths.get(host.toLowerCase()) ?? null;
  }

  get size(): number {
    return this.paths.size;
  }
}

/** The process's registry (see the note at the top). */
export const tunnelHosts = new TunnelHosts();
