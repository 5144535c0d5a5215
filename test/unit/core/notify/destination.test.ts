// Where a channel made in the console may send: loopback (unless allowed), unspecified, link-local and
// metadata addresses are refused, by URL and by every address a name resolves to; LAN and public
// addresses pass. The real sender is driven against loopback receivers with a resolver that answers
// like a rebinding DNS server, so the connect-time check is exercised, not only the URL check.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LookupAddress } from 'node:dns';
import { afterEach, describe, expect, it } from 'vitest';
import { UndiciSender, guardedLookup, refusedAddress, refusedUrlHost } from '../../../../src-main/core/notify/index.js';

const strict = { allowLoopback: false };
const loose = { allowLoopback: true };

describe('refused addresses', () => {
  it('refuses loopback (unless allowed), unspecified, link-local, metadata, IPv4-compatible and multicast addresses', () => {
    for (const a of ['127.0.0.1', '127.9.9.9', '::1', '::ffff:127.0.0.1']) {
      expect(refusedAddress(a, strict), a).toMatch(/loopback/);
      expect(refusedAddress(a, loose), a).toBeNull();
    }
    const always: [string, RegExp][] = [
      ['0.0.0.0', /unspecified/],
      ['::', /unspecified/],
      ['169.254.169.254', /link-local/],
      ['::ffff:169.254.169.254', /link-local/],
      ['fe80::1', /link-local/],
      ['100.100.100.200', /metadata/],
      ['fd00:ec2::254', /metadata/],
      ['::7f00:1', /IPv4-compatible/],
      ['224.0.0.251', /multicast/],
      ['255.255.255.255', /broadcast/],
      ['ff02::1', /multicast/],
    ];
    for (const [a, why] of always) {
      expect(refusedAddress(a, strict), a).toMatch(why);
      expect(refusedAddress(a, loose), a).toMatch(why);
    }
  });

  it('lets LAN and public receivers through: a self-hosted ntfy or webhook receiver is what operators use', () => {
    for (const a of ['10.0.0.5', '172.16.3.4', '192.168.1.10', '100.64.0.7', 'fd12:3456::1', '8.8.8.8', '2001:db8::1']) expect(refusedAddress(a, strict), a).toBeNull();
  });

  it('judges a URL by its host as the URL parser normalises it; names are left to the lookup', () => {
    for (const u of ['http://localhost:8080/x', 'http://api.LOCALHOST./x', 'http://[::1]:9/', 'http://2130706433/', 'http://0x7f.1/', 'http://[::ffff:127.0.0.1]/', 'http://a.example@127.0.0.1/']) {
      expect(refusedUrlHost(u, strict), u).toMatch(/loopback/);
      expect(refusedUrlHost(u, loose), u).toBeNull();
    }
    expect(refusedUrlHost('http://169.254.169.254/latest/meta-data/', loose)).toMatch(/link-local/);
    expect(refusedUrlHost('http://[fe80::1%25eth0]/', loose)).not.toBeNull();
    expect(refusedUrlHost('https://ntfy.example.org/topic', strict)).toBeNull();
    expect(refusedUrlHost('http://192.168.1.20:8080/hook', strict)).toBeNull();
  });
});

/** A resolver that answers every name with `addresses` (as a rebinding DNS server could). */
function fakeResolver(addresses: LookupAddress[]) {
  return ((_host: string, _opts: unknown, cb: (err: NodeJS.ErrnoException | null, a: LookupAddress[]) => void) => cb(null, addresses)) as never;
}

describe('guarded lookup', () => {
  const lookup = (addresses: LookupAddress[], rule = strict, all = true) =>
    new Promise<{ err: { code?: string; message: string } | null; out: unknown }>((resolve) => {
      guardedLookup(rule, fakeResolver(addresses))('hooks.example.org', { all }, (err: NodeJS.ErrnoException | null, out: unknown) => resolve({ err, out }));
    });

  it('fails when any resolved address is refused, so a mixed answer cannot slip one past', async () => {
    const r = await lookup([{ address: '10.0.0.1', family: 4 }, { address: '127.0.0.1', family: 4 }]);
    expect(r.err).toMatchObject({ code: 'NOTIFY_DESTINATION_REFUSED', message: expect.stringContaining('loopback') });
    expect((await lookup([{ address: '169.254.169.254', family: 4 }], loose)).err?.code).toBe('NOTIFY_DESTINATION_REFUSED');
  });

  it('answers in the shape asked for (all: true for happy eyeballs, one address otherwise)', async () => {
    expect((await lookup([{ address: '10.0.0.1', family: 4 }, { address: 'fd12::1', family: 6 }])).out).toEqual([{ address: '10.0.0.1', family: 4 }, { address: 'fd12::1', family: 6 }]);
    const one = await new Promise<unknown[]>((resolve) => {
      guardedLookup(strict, fakeResolver([{ address: '10.0.0.1', family: 4 }]))('h.example', {}, (...args: unknown[]) => resolve(args));
    });
    expect(one).toEqual([null, '10.0.0.1', 4]);
  });
});

describe('the real sender', () => {
  const servers: Server[] = [];
  const senders: UndiciSender[] = [];
  afterEach(async () => {
    await Promise.all(senders.splice(0).map((s) => s.dispose()));
    await Promise.all(servers.splice(0).map((s) => new Promise((r) => { s.closeAllConnections(); s.close(r); })));
  });

  async function receiver(answer: (res: import('node:http').ServerResponse) => void = (res) => res.writeHead(204).end()): Promise<{ port: number; hits: string[] }> {
    const hits: string[] = [];
    const server = createServer((req, res) => {
      hits.push(`${req.method} ${req.url}`);
      req.resume();
      req.on('end', () => answer(res));
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return { port: (server.address() as AddressInfo).port, hits };
  }
  const post = (url: string) => ({ url, method: 'POST' as const, headers: { authorization: 'Bearer planted-token' }, body: 'x' });
  const codeOf = (p: Promise<unknown>) => p.then(() => 'sent', (e: { code?: string }) => e.code ?? String(e));

  it('refuses a loopback literal before connecting; a config channel (no rule) reaches it', async () => {
    const r = await receiver();
    const sender = new UndiciSender();
    senders.push(sender);
    expect(await codeOf(sender.send(post(`http://127.0.0.1:${r.port}/probe`), 2_000, strict))).toBe('NOTIFY_DESTINATION_REFUSED');
    expect(r.hits).toEqual([]);
    expect(await sender.send(post(`http://127.0.0.1:${r.port}/ok`), 2_000, null)).toEqual({ status: 204 });
    expect(await sender.send(post(`http://127.0.0.1:${r.port}/allowed`), 2_000, loose)).toEqual({ status: 204 });
    expect(r.hits).toEqual(['POST /ok', 'POST /allowed']);
  });

  it('checks the address a name resolves to when it connects (DNS rebinding): nothing reaches the port', async () => {
    const r = await receiver();
    const sender = new UndiciSender(fakeResolver([{ address: '127.0.0.1', family: 4 }]));
    senders.push(sender);
    expect(await codeOf(sender.send(post(`http://lan-receiver.example:${r.port}/probe`), 2_000, strict))).toBe('NOTIFY_DESTINATION_REFUSED');
    expect(r.hits).toEqual([]);
    // The same name through the loopback-allowing rule connects: the refusal above came from the lookup, not the URL.
    expect(await sender.send(post(`http://lan-receiver.example:${r.port}/ok`), 2_000, loose)).toEqual({ status: 204 });
    expect(r.hits).toEqual(['POST /ok']);
  });

  it('does not follow a redirect: a receiver cannot bounce a notice (and its token) elsewhere', async () => {
    const target = await receiver();
    const bouncer = await receiver((res) => res.writeHead(307, { location: `http://127.0.0.1:${target.port}/stolen` }).end());
    const sender = new UndiciSender();
    senders.push(sender);
    expect(await sender.send(post(`http://127.0.0.1:${bouncer.port}/in`), 2_000, loose)).toEqual({ status: 307 });
    expect(target.hits).toEqual([]);
  });
});
