import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_ANSWER_BYTES, MAX_STREAM_LINE_CHARS, runRequest } from '../../../../src-main/core/bench/http-request.js';
import { UpstreamClient } from '../../../../src-main/core/upstream/index.js';

// A benchmark target is any loopback server the operator names; what it sends
// back must not grow the console without bound: a stream line that never
// ends, an error page of megabytes, a non-streamed answer of tens of megabytes.

const servers: Server[] = [];
const dispatchers: UpstreamClient[] = [];
afterEach(async () => {
  await Promise.allSettled(dispatchers.splice(0).map((d) => d.destroy()));
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

/** Serves `size` bytes of `fill` (after `head`) with the status and content type given, in 64 KiB writes. */
async function serve(status: number, type: string, head: string, size: number): Promise<{ url: string; sent: () => number }> {
  let sent = 0;
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(status, { 'content-type': type });
    res.write(head);
    const piece = Buffer.alloc(64 * 1024, 'x');
    const more = () => {
      while (sent < size && !res.destroyed) {
        sent += piece.length;
        if (!res.write(piece)) return void res.once('drain', more);
      }
      res.end();
    };
    res.on('error', () => undefined);
    more();
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`, sent: () => sent };
}

function run(url: string, stream: boolean) {
  const u = new URL(url);
  const client = UpstreamClient.forUrl(u.origin, { onPrem: null, purpose: 'probe' }, { connections: 1 });
  dispatchers.push(client);
  return runRequest({
    client,
    path: u.pathname,
    headers: {},
    body: { model: 'M', messages: [{ role: 'user', content: 'x' }], stream },
    stream,
    timeoutMs: 20_000,
    signal: new AbortController().signal,
    now: () => performance.now(),
  });
}

describe('runRequest reads a bounded amount of what the target sends', () => {
  it('a stream line that never ends: BENCH_BAD_STREAM after about a mebibyte, the rest not read', async () => {
    const s = await serve(200, 'text/event-stream', 'data: ', 64 * 1024 * 1024);
    const out = await run(s.url, true);
    expect(out).toMatchObject({ errorCode: 'BENCH_BAD_STREAM', errorMessage: expect.stringContaining(`${MAX_STREAM_LINE_CHARS} characters`) });
    expect(s.sent()).toBeLessThan(32 * 1024 * 1024);
  });

  it('a non-streamed answer over 16 MiB: BENCH_BAD_STREAM, not parsed', async () => {
    const s = await serve(200, 'application/json', '{"choices":[{"message":{"content":"', 64 * 1024 * 1024);
    const out = await run(s.url, false);
    expect(out).toMatchObject({ errorCode: 'BENCH_BAD_STREAM', errorMessage: expect.stringContaining(`over ${MAX_ANSWER_BYTES} bytes`) });
    expect(s.sent()).toBeLessThan(48 * 1024 * 1024);
  });

  it('an error page of 64 MiB: HTTP_500 with the first 300 characters, the rest not read', async () => {
    // Loopback's socket buffers grow to tens of MiB (tcp_rmem max 32 MiB here): an 8 MiB page with a 4 MiB bound
    // failed a full CI run (4.06 MiB accepted by the kernel before the close). The page is far larger than the
    // buffers can take, so a reader that read it all would be seen.
    const s = await serve(500, 'text/html', '<html>', 64 * 1024 * 1024);
    const out = await run(s.url, true);
    expect(out.errorCode).toBe('HTTP_500');
    expect(out.errorMessage).toBe('<html>' + 'x'.repeat(294));
    expect(s.sent()).toBeLessThan(48 * 1024 * 1024);
  });
});
