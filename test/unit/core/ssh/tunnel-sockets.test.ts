import { spawn } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Duplex } from 'node:stream';
import { Agent, request } from 'undici';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { TunnelHosts } from '../../../../src-main/core/base/index.js';
import { LocalForward, MAX_SOCKET_PATH_BYTES, TunnelSockets } from '../../../../src-main/core/ssh/index.js';
import { createTunnelAgent, tunnelAwareConnector } from '../../../../src-main/core/upstream-dispatch.js';

// The tunnels' private sockets: a 0700 folder of the console's own (the data
// dir's, or a temporary one when that path is too long for a socket), socket
// files removed only inside it, and the one connector that reaches them by
// name.

const root = mkdtempSync(join(tmpdir(), 'gc-ts-'));
const made: TunnelSockets[] = [];
const servers: Server[] = [];
const conns = new Set<Socket>();

/** A tiny HTTP answer per connection, closed after it. */
function answering(answer: string): Server {
  const server = createServer((c) => {
    conns.add(c);
    c.on('error', () => undefined);
    c.once('close', () => conns.delete(c));
    c.once('data', () => c.end(answer));
  });
  servers.push(server);
  return server;
}

function sockets(preferredDir: string | null): TunnelSockets {
  const s = new TunnelSockets({ preferredDir });
  made.push(s);
  return s;
}

function listen(path: string): Promise<Server> {
  const server = answering('HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok');
  return new Promise((resolve) => server.listen(path, () => resolve(server)));
}

/** A socket file nobody listens on, as a master killed with SIGKILL leaves it. */
async function staleSocket(path: string): Promise<void> {
  const child = spawn(process.execPath, ['-e', `require('net').createServer().listen(${JSON.stringify(path)}, () => console.log('up'))`], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((r) => child.stdout!.once('data', () => r()));
  child.kill('SIGKILL');
  await new Promise((r) => child.once('exit', r));
  expect(lstatSync(path).isSocket()).toBe(true);
}

afterEach(async () => {
  for (const c of conns) c.destroy();
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
  for (const s of made.splice(0)) s.dispose();
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('TunnelSockets', () => {
  it("uses the data dir's folder, made (or made again) 0700", () => {
    const dir = join(root, 'data', 'tunnels');
    mkdirSync(dir, { recursive: true, mode: 0o755 });
    chmodSync(dir, 0o755);
    const s = sockets(dir);
    const path = s.allocate();
    expect(dirname(path)).toBe(dir);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(path).toMatch(/\/[0-9a-f]{16}\.sock$/);
    expect(s.allocate()).not.toBe(path);
  });

  it('a data dir too deep for a socket path: a temporary 0700 folder of its own, removed on dispose', () => {
    const deep = join(root, 'x'.repeat(90), 'tunnels');
    const s = sockets(deep);
    const path = s.allocate();
    expect(Buffer.byteLength(path)).toBeLessThanOrEqual(MAX_SOCKET_PATH_BYTES);
    expect(dirname(path)).not.toBe(deep);
    expect(existsSync(deep)).toBe(false);
    expect(statSync(dirname(path)).mode & 0o777).toBe(0o700);
    s.dispose();
    expect(existsSync(dirname(path))).toBe(false);
  });

  it('a folder that is a link, or a path with a colon (it would split `-L path:host:port`), is not used', () => {
    const real = join(root, 'real');
    mkdirSync(real, { mode: 0o700 });
    const link = join(root, 'link');
    symlinkSync(real, link);
    expect(dirname(sockets(link).allocate())).not.toBe(link);
    expect(dirname(sockets(join(root, 'a:b')).allocate())).not.toBe(join(root, 'a:b'));
  });

  it('on Windows: a named pipe under an unguessable name, no folder made', () => {
    const dir = join(root, 'win', 'tunnels');
    const win = new TunnelSockets({ preferredDir: dir, platform: 'win32' });
    made.push(win);
    const a = win.allocate();
    expect(a).toMatch(/^\\\\\?\\pipe\\gpu-console-tunnel-[0-9a-f]{32}$/);
    expect(win.allocate()).not.toBe(a);
    expect(existsSync(dir)).toBe(false);
  });

  it('a temporary folder when no data dir is given', () => {
    const path = sockets(null).allocate();
    expect(statSync(dirname(path)).mode & 0o777).toBe(0o700);
  });

  it('reclaims a stale socket file, never a live one, a plain file, or anything outside its folder', async () => {
    const s = sockets(join(root, 'reclaim'));
    const stale = s.allocate();
    await staleSocket(stale);
    expect(await s.reclaimStale(stale)).toBe(true);
    expect(existsSync(stale)).toBe(false);

    const live = s.allocate();
    await listen(live);
    expect(await s.reclaimStale(live)).toBe(false);
    expect(existsSync(live)).toBe(true);

    const plain = join(s.dir, 'plain.sock');
    writeFileSync(plain, 'x');
    expect(await s.reclaimStale(plain)).toBe(false);
    s.remove(plain);
    expect(existsSync(plain)).toBe(true);

    const outside = join(root, 'outside.sock');
    await staleSocket(outside);
    expect(await s.reclaimStale(outside)).toBe(false);
    s.remove(outside);
    expect(existsSync(outside)).toBe(true);
  });

  it('sweep removes the stale sockets an earlier console left', async () => {
    const s = sockets(join(root, 'sweep'));
    const a = s.allocate();
    const b = s.allocate();
    await staleSocket(a);
    await listen(b);
    expect(await s.sweep()).toBe(1);
    expect(existsSync(a)).toBe(false);
    expect(existsSync(b)).toBe(true);
  });

  it('LocalForward binds a path a dead master left behind, 0600', async () => {
    const s = sockets(join(root, 'bind'));
    const path = s.allocate();
    await staleSocket(path);
    const opener = { forwardOut: () => Promise.resolve(new Duplex({ read() {}, write(_c, _e, cb) { cb(); } })) };
    const f = await LocalForward.open(opener, { socketPath: path, reclaimStale: (p) => s.reclaimStale(p), remoteHost: '127.0.0.1', remotePort: 1 });
    try {
      expect(f.socketPath).toBe(path);
      expect(statSync(path).mode & 0o777).toBe(0o600);
    } finally {
      await f.close();
    }
    // Without the reclaim the bind is refused, coded.
    await staleSocket(path);
    await expect(LocalForward.open(opener, { socketPath: path, remoteHost: '127.0.0.1', remotePort: 1 })).rejects.toMatchObject({ code: 'SSH_FORWARD_LISTEN_FAILED' });
  });
});

describe('the tunnel-aware connector', () => {
  it('a registered name reaches its socket; an unregistered one fails coded, without DNS; other hosts are TCP', async () => {
    const s = sockets(join(root, 'conn'));
    const path = s.allocate();
    await listen(path);
    const tunnels = new TunnelHosts();
    const entry = tunnels.register(path);
    const agent = new Agent({ connect: tunnelAwareConnector(tunnels) });
    try {
      const res = await request(`${entry.url}/v1/models`, { dispatcher: agent });
      expect(res.statusCode).toBe(200);
      expect(await res.body.text()).toBe('ok');
      await expect(request('http://0123456789abcdef01234567.tunnel.gpu-console.invalid/v1/models', { dispatcher: agent })).rejects.toMatchObject({ code: 'UPSTREAM_TUNNEL_UNKNOWN' });
      entry.dispose();
      await expect(request(`${entry.url}/x`, { dispatcher: agent, reset: true })).rejects.toMatchObject({ code: 'UPSTREAM_TUNNEL_UNKNOWN' });
      const tcp = answering('HTTP/1.1 204 No Content\r\nconnection: close\r\n\r\n');
      await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', () => r()));
      const port = (tcp.address() as { port: number }).port;
      expect((await request(`http://127.0.0.1:${port}/`, { dispatcher: agent })).statusCode).toBe(204);
    } finally {
      await agent.close();
    }
  });

  it("createTunnelAgent uses the process's registry", async () => {
    const agent = createTunnelAgent();
    try {
      await expect(request('http://aaaaaaaaaaaaaaaaaaaaaaaa.tunnel.gpu-console.invalid/', { dispatcher: agent })).rejects.toMatchObject({ code: 'UPSTREAM_TUNNEL_UNKNOWN' });
    } finally {
      await agent.close();
    }
  });
});
