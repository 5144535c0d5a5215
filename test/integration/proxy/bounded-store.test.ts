import { statSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawHttp, startStub, startStubProxy, type StubProxy } from './helpers.js';

// Strangers cannot fill the disk through the proxy: a request without a valid
// token is counted in /metrics, never stored as a row; the rows that are
// stored have a retention. And the Host check names our port.

let stub: Awaited<ReturnType<typeof startStub>>;
let p: StubProxy;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gc-bounded-'));
  stub = await startStub((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ id: 'x', object: 'chat.completion', choices: [], usage: { prompt_tokens: 1, completion_tokens: 1 } }));
  });
  p = await startStubProxy([{ label: 'h', id: 's', model: 'M', url: stub.url }], {}, undefined, { file: join(dir, 'gpu-console.db') });
});
afterAll(async () => {
  await p?.close();
  await stub?.close();
});

const dbBytes = () => ['', '-wal', '-shm'].reduce((sum, suffix) => sum + (statSync(join(dir, `gpu-console.db${suffix}`), { throwIfNoEntry: false })?.size ?? 0), 0);

const raw = (text: string) => rawHttp(p.proxy.origin, text);

describe('a bounded request log', () => {
  it('20,000 token-less requests are counted per reason in /metrics and grow the database by less than 100 kB', async () => {
    const token = p.token('real');
    // One real request first, so the log's table and pages exist before the baseline.
    const ok = await request(`${p.proxy.origin}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'M', messages: [] }),
    });
    await ok.body.text();
    expect(ok.statusCode).toBe(200);
    expect(p.rows()).toBe(1);
    const before = dbBytes();

    const agent = new Agent({ connections: 32, pipelining: 1 });
    const kinds = [
      { headers: {}, reason: 'missing_token' },
      { headers: { authorization: 'Bearer gcp_not-a-token' }, reason: 'invalid_token' },
      { headers: { authorization: 'Basic abc' }, reason: 'invalid_token' },
    ];
    const total = 20_000;
    let next = 0;
    const statuses = new Map<number, number>();
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < total) {
          const i = next++;
          const kind = kinds[i % kinds.length]!;
          const r = await request(`${p.proxy.origin}/v1/chat/completions`, {
            method: 'POST',
            dispatcher: agent,
            headers: { 'content-type': 'application/json', ...kind.headers },
            body: '{"model":"M","messages":[]}',
          });
          await r.body.dump();
          statuses.set(r.statusCode, (statuses.get(r.statusCode) ?? 0) + 1);
        }
      }),
    );
    await agent.close();
    expect(Object.fromEntries(statuses)).toEqual({ 401: total });
    expect(p.rows()).toBe(1);
    p.store.db.pragma('wal_checkpoint(TRUNCATE)');
    const grown = dbBytes() - before;
    expect(grown).toBeLessThan(100 * 1024);

    const metrics = await (await request(`${p.proxy.origin}/metrics`)).body.text();
    const count = (reason: string) => Number(new RegExp(`gpu_console_proxy_unstored_requests_total\\{endpoint="chat",reason="${reason}"\\} (\\d+)`).exec(metrics)?.[1] ?? 'NaN');
    expect(count('missing_token')).toBe(Math.ceil(total / 3));
    expect(count('invalid_token')).toBe(total - Math.ceil(total / 3));
    // Scrapes themselves are counted, not stored either.
    const again = await (await request(`${p.proxy.origin}/metrics`)).body.text();
    expect(again).toContain('gpu_console_proxy_unstored_requests_total{endpoint="metrics",reason="ok"} 1');
    expect(p.rows()).toBe(1);
  }, 60_000);

  it('the Host header must name loopback and our port; HTTP/1.1 without Host is refused, HTTP/1.0 without it is served', async () => {
    const port = Number(new URL(p.proxy.origin).port);
    const get = (hostLine: string, version = '1.1') => raw(`GET /health HTTP/${version}\r\n${hostLine}Connection: close\r\n\r\n`);
    expect(await get(`Host: 127.0.0.1:${port}\r\n`)).toMatch(/^HTTP\/1\.1 200/);
    expect(await get('Host: localhost\r\n')).toMatch(/^HTTP\/1\.1 200/);
    const otherPort = await get(`Host: 127.0.0.1:${port === 65535 ? 1 : port + 1}\r\n`);
    expect(otherPort).toMatch(/^HTTP\/1\.1 403/);
    expect(otherPort).toContain('forbidden_host');
    expect(await get('Host: 127.0.0.1.nip.io\r\n')).toMatch(/^HTTP\/1\.1 403/);
    expect(await get('Host: user@127.0.0.1\r\n')).toMatch(/^HTTP\/1\.1 (400|403)/);
    // Node itself refuses an HTTP/1.1 request without Host (400) unless told otherwise; either way it is not served.
    expect(await get('')).toMatch(/^HTTP\/1\.1 400/);
    expect(await get('', '1.0')).toMatch(/^HTTP\/1\.1 200/);
  });

  it('a malformed percent-escape in the path is 400 invalid_path, not a lookup', async () => {
    for (const path of ['/v1/models/%E0%A4%A', '/v1/chat%2', '/v1/%zz']) {
      const r = await request(`${p.proxy.origin}${path}`);
      const body = (await r.body.json()) as { error: { code: string } };
      expect(r.statusCode, path).toBe(400);
      expect(body.error.code).toBe('invalid_path');
    }
  });
});

describe('request log retention', () => {
  it('deletes rows past the age and past the row cap, oldest first, and says what it keeps', async () => {
    const q = await startStubProxy([{ label: 'h', id: 's', model: 'M', url: stub.url }], {}, undefined, {
      file: join(dir, 'retention.db'),
      retention: { maxAgeMs: 86_400_000, maxRows: 5_000 },
    });
    try {
      const now = Date.now();
      const insert = q.store.db.prepare(
        `INSERT INTO requests (id, ts, client, class, endpoint, model, upstream, stream, status, error_code, queue_ms, ttft_ms, total_ms, tokens_in, tokens_out, bytes_in, bytes_out)
         VALUES (?, ?, 'c', 'batch', '/v1/chat/completions', 'M', 'h/s', 0, 200, NULL, 0, NULL, 1, 1, 1, 1, 1)`,
      );
      q.store.db.transaction(() => {
        // 3,000 rows two days old, then 9,000 fresh ones.
        for (let i = 0; i < 3_000; i++) insert.run(`old-${i}`, now - 2 * 86_400_000 + i);
        for (let i = 0; i < 9_000; i++) insert.run(`new-${i}`, now - 60_000 + i);
      })();
      expect(q.rows()).toBe(12_000);
      const deleted = await q.log.prune();
      expect(deleted).toBe(7_000);
      expect(q.rows()).toBe(5_000);
      const kept = q.store.db.prepare('SELECT MIN(id) AS first, COUNT(*) AS n FROM requests WHERE id LIKE ?').get('old-%') as { n: number };
      expect(kept.n).toBe(0);
      const oldest = q.store.db.prepare('SELECT id FROM requests ORDER BY seq LIMIT 1').get() as { id: string };
      expect(oldest.id).toBe('new-4000');
      const view = q.log.retentionView();
      expect(view).toMatchObject({ maxAgeDays: 1, maxRows: 5_000, rowsKept: 5_000, lastPrunedRows: 7_000 });
      expect(await q.log.prune()).toBe(0);
    } finally {
      await q.close();
    }
  });
});
