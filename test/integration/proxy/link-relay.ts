// A loopback TCP relay in front of an SSH server, standing in for the network
// and the host's sshd: `cut()` is a cable pulled (connections go silent, new
// ones are taken and never answered, as when SYN retransmits wait for the link),
// `restore()` puts it back (the waiting connections then go through); `refuse()`
// is sshd stopped (listener closed: ECONNREFUSED, connections reset),
// `listen()` again is sshd started on the same port.
import { createConnection, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

export interface LinkRelay {
  readonly port: number;
  cut(): void;
  restore(): void;
  /** Closes the listener and resets every connection: the next dial is refused. */
  refuse(): Promise<void>;
  /** Listens again on the same port. */
  listen(): Promise<void>;
  close(): Promise<void>;
}

export async function startLinkRelay(targetPort: number): Promise<LinkRelay> {
  const open = new Set<Socket>();
  /** Connections taken while cut, waiting for the link to come back. */
  const waiting = new Set<Socket>();
  let isCut = false;
  let server: Server | null = null;
  let port = 0;

  const track = (s: Socket) => {
    open.add(s);
    s.on('error', () => s.destroy());
    s.once('close', () => {
      open.delete(s);
      waiting.delete(s);
    });
  };
  const relay = (client: Socket) => {
    const upstream = createConnection({ host: '127.0.0.1', port: targetPort });
    track(upstream);
    // Silence both ways while cut: nothing passes, nothing is closed (a pulled cable).
    client.on('data', (chunk: Buffer) => {
      if (!isCut) upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!isCut) client.write(chunk);
    });
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
  };
  const onConnection = (client: Socket) => {
    track(client);
    if (isCut) {
      // Bytes the client sends meanwhile stay in its socket until the link is back.
      client.pause();
      waiting.add(client);
      return;
    }
    relay(client);
  };
  const listen = (p: number) =>
    new Promise<void>((resolve, reject) => {
      const s = createServer(onConnection);
      s.once('error', reject);
      s.listen(p, '127.0.0.1', () => {
        s.off('error', reject);
        server = s;
        port = (s.address() as AddressInfo).port;
        resolve();
      });
    });
  const closeServer = () =>
    new Promise<void>((resolve) => {
      const s = server;
      server = null;
      if (!s) return resolve();
      s.close(() => resolve());
    });
  const resetAll = () => {
    for (const s of [...open]) s.resetAndDestroy();
  };

  await listen(0);
  return {
    get port() {
      return port;
    },
    cut() {
      isCut = true;
    },
    restore() {
      isCut = false;
      // Connections that went silent during the cut were given up on by the client; those that waited go through now.
      for (const c of [...waiting]) {
        waiting.delete(c);
        relay(c);
        c.resume();
      }
    },
    async refuse() {
      await Promise.all([closeServer(), Promise.resolve(resetAll())]);
    },
    async listen() {
      await listen(port);
    },
    async close() {
      resetAll();
      await closeServer();
    },
  };
}
