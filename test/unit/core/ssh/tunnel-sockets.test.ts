import { spawn } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Duplex } from 'node:stream';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { LocalForward, MAX_SOCKET_PATH_BYTES, TunnelSockets } from '../../../../src-main/core/ssh/index.js';
import { UpstreamClient, upstreamKey } from '../../../../src-main/core/upstream/index.js';

// The tunnels' private sockets: a 0700 folder of the console's own (the data
// dir's, or a temporary one when that path is too long for a socket), socket
// files removed only inside it, and the client bound to one of them.

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

describe("a tunnel's upstream client", () => {
  it('reaches its socket whatever the Host it sends (never looked up); a gone socket or a closed client fails coded, never over TCP', async () => {
    const s = sockets(join(root, 'conn'));
    const path = s.allocate();
    const server = await listen(path);
    const client = UpstreamClient.forTunnel(upstreamKey('gpu-a', 'qwen'), path, { host: 'gpu-a.example.invalid', port: 8000 });
    try {
      const res = await client.request({ path: '/v1/models', deadlineMs: 5_000, maxBodyBytes: 1_024 });
      expect(res.status).toBe(200);
      expect(res.text).toBe('ok');
      await new Promise((r) => server.close(r));
      for (const c of conns) c.destroy();
      // No listener on the path any more (the tunnel closed under it): refused, not a DNS lookup of the Host.
      await expect(client.request({ path: '/x', deadlineMs: 5_000, maxBodyBytes: 1_024 })).rejects.toMatchObject({
        code: 'UPSTREAM_REFUSED',
        details: { where: 'GET /x through the tunnel to gpu-a/qwen' },
      });
      await client.destroy();
      await expect(client.request({ path: '/x', deadlineMs: 5_000, maxBodyBytes: 1_024 })).rejects.toMatchObject({ code: 'UPSTREAM_CLOSED', message: 'the tunnel to gpu-a/qwen is closed' });
    } finally {
      await client.destroy();
    }
  });
});

