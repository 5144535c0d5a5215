// A small ssh2 server for SSH tests: counts authentication attempts (so a test
// can prove none was made), accepts one client key, runs scripted exec
// commands and forwards direct-tcpip to 127.0.0.1 ports.

import { createConnection, type AddressInfo, type Socket } from 'node:net';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { timingSafeEqual } from 'node:crypto';
import ssh2 from 'ssh2';
import type { Connection, ParsedKey, Server } from 'ssh2';
import { generateEd25519 } from '../../../../src-main/demo/keys.js';

const { Server: SshServer, utils } = ssh2;

export interface TestSshServerOptions {
  /** Exec handler: returns stdout/stderr/code, or 'hang' to never answer. */
  exec?: (command: string) => { stdout?: string; stderr?: string; code?: number } | 'hang';
}

export interface TestSshServer {
  port: number;
  dir: string;
  clientKeyFile: string;
  hostKeyPublicLine: string;
  hostKeyBlob: Buffer;
  authAttempts: string[];
  connections: number;
  /** known_hosts text that trusts this server's key at [127.0.0.1]:port. */
  knownHostsLine(): string;
  writeKnownHosts(text: string): string;
  /** Cuts every client connection (as if the host rebooted) without closing the listener. */
  dropClients(): void;
  close(): Promise<void>;
}

function parse(text: string): ParsedKey {
  const k = utils.parseKey(text);
  if (k instanceof Error) throw k;
  return Array.isArray(k) ? k[0] : k;
}

export async function startTestSshServer(options: TestSshServerOptions = {}): Promise<TestSshServer> {
  const dir = mkdtempSync(join(tmpdir(), 'test-sshd-'));
  const host = generateEd25519('test host').pair;
  const client = generateEd25519('test client').pair;
  const clientKeyFile = join(dir, 'client_ed25519');
  writeFileSync(clientKeyFile, client.private, { mode: 0o600 });
  const clientPub = parse(client.public);
  const hostPub = parse(host.public);
  const authAttempts: string[] = [];
  const sockets = new Set<Socket>();
  const conns = new Set<Connection>();
  let connections = 0;

  const server: Server = new SshServer({ hostKeys: [host.private] }, (conn) => {
    connections++;
    conns.add(conn);
    conn.on('close', () => {
      connections--;
      conns.delete(conn);
    });
    conn.on('error', () => undefined);
    conn.on('authentication', (ctx) => {
      authAttempts.push(ctx.method);
      if (ctx.method === 'publickey') {
        const same =
          ctx.key.algo === clientPub.type && ctx.key.data.length === clientPub.getPublicSSH().length && timingSafeEqual(ctx.key.data, clientPub.getPublicSSH());
        if (!same) return ctx.reject(['publickey']);
        if (ctx.signature && ctx.blob && clientPub.verify(ctx.blob, ctx.signature, ctx.hashAlgo) !== true) return ctx.reject(['publickey']);
        return ctx.accept();
      }
      ctx.reject(['publickey']);
    });
    conn.on('ready', () => {
      conn.on('session', (accept) => {
        const session = accept();
        session.on('exec', (acceptExec, _reject, info) => {
          const stream = acceptExec();
          const result = options.exec?.(info.command) ?? { stdout: '', code: 0 };
          if (result === 'hang') return;
          if (result.stdout) stream.write(result.stdout);
          if (result.stderr) stream.stderr.write(result.stderr);
          stream.exit(result.code ?? 0);
          stream.end();
        });
      });
      conn.on('tcpip', (accept, reject, info) => {
        const sock = createConnection({ host: '127.0.0.1', port: info.destPort });
        let connected = false;
        sock.once('connect', () => {
          connected = true;
          const ch = accept();
          sockets.add(sock);
          sock.once('close', () => sockets.delete(sock));
          sock.pipe(ch).pipe(sock);
          ch.on('error', () => sock.destroy());
          sock.on('error', () => ch.destroy());
        });
        sock.once('error', () => {
          if (!connected) reject();
        });
      });
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const hostKeyBlob = hostPub.getPublicSSH();
  const hostKeyPublicLine = `${hostPub.type} ${hostKeyBlob.toString('base64')}`;

  return {
    port,
    dir,
    clientKeyFile,
    hostKeyPublicLine,
    hostKeyBlob,
    authAttempts,
    get connections() {
      return connections;
    },
    knownHostsLine: () => `[127.0.0.1]:${port} ${hostKeyPublicLine}`,
    writeKnownHosts(text: string) {
      const file = join(dir, `known_hosts_${Math.random().toString(36).slice(2)}`);
      writeFileSync(file, text);
      return file;
    },
    dropClients() {
      for (const c of conns) c.end();
      for (const s of sockets) s.destroy();
    },
    async close() {
      for (const c of conns) c.end();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
