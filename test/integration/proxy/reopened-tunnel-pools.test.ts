import { request } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { startStub, startStubProxy } from './helpers.js';

// A tunnel opened again (after every SSH reconnect) has a new private name, so
// the proxy sees a new origin for the same upstream. It kept one keep-alive
// pool per origin, forever: one more pool, and its idle socket, per reconnect.
// Now it keeps one pool per upstream and closes the previous tunnel's.

const stubs: Array<Awaited<ReturnType<typeof startStub>>> = [];
afterAll(async () => {
  for (const s of stubs) await s.close();
});

const openSockets = async (): Promise<number> => {
  let n = 0;
  for (const s of stubs) n += await new Promise<number>((resolve, reject) => s.server.getConnections((err, count) => (err ? reject(err) : resolve(count))));
  return n;
};

describe('pools of a tunnel that reopens', () => {
  it('twelve reopened origins for one upstream leave one open keep-alive socket, not twelve', async () => {
    for (let i = 0; i < 12; i++) {
      stubs.push(
        await startStub((_req, res) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ id: 'x', object: 'chat.completion', choices: [], usage: { prompt_tokens: 1, completion_tokens: 1 } }));
        }),
      );
    }
    let current = 0;
    const p = await startStubProxy([{ label: 'h', id: 's', model: 'M', url: stubs[0]!.url }], {}, { resolve: () => ({ ok: true, url: stubs[current]!.url }) });
    try {
      const token = p.token('reopens');
      for (current = 0; current < stubs.length; current++) {
        const r = await request(`${p.proxy.origin}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'M', messages: [] }),
        });
        await r.body.text();
        expect(r.statusCode).toBe(200);
      }
      // The closed pools' sockets go within a moment; the current pool keeps its one idle socket.
      for (let i = 0; i < 50 && (await openSockets()) > 1; i++) await new Promise((r) => setTimeout(r, 20));
      expect(await openSockets()).toBe(1);
    } finally {
      await p.close();
    }
  });
});
