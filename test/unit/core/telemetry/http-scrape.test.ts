import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchText, probeHealth, scrapeLlamaServerMetrics, scrapeVllmMetrics } from '../../../../src-main/core/telemetry/index.js';
import { closeUrlClients, urlClient } from '../../../helpers/upstream.js';

let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    switch (req.url) {
      case '/big/metrics':
        res.writeHead(200).end('x'.repeat(50_000));
        return;
      case '/stall/metrics':
        return; // never answers
      case '/err/metrics':
        res.writeHead(503).end('loading');
        return;
      case '/err/health':
        res.writeHead(503).end();
        return;
      case '/llama/metrics':
        res.writeHead(200).end(
          [
            '# TYPE llamacpp:prompt_tokens_total counter',
            'llamacpp:prompt_tokens_total 4096',
            '# TYPE llamacpp:tokens_predicted_total counter',
            'llamacpp:tokens_predicted_total 512',
            '# TYPE llamacpp:requests_processing gauge',
            'llamacpp:requests_processing 1',
            '# TYPE llamacpp:requests_deferred gauge',
            'llamacpp:requests_deferred 2',
          ].join('\n'),
        );
        return;
      default:
        res.writeHead(200).end('vllm:num_requests_running{engine="0"} 3\nbroken line here\n');
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await closeUrlClients();
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

describe('HTTP scrapes', () => {
  it('reads vLLM figures and counts unreadable lines', async () => {
    const r = await scrapeVllmMetrics(urlClient(base));
    expect(r.metrics.running).toBe(3);
    expect(r.parseErrors).toBe(1);
  });

  it('reads llama-server figures', async () => {
    const r = await scrapeLlamaServerMetrics(urlClient(`${base}/llama`));
    expect(r.metrics).toMatchObject({ running: 1, waiting: 2, promptTokensTotal: 4096, generationTokensTotal: 512, promptTokensCachedTotal: null });
  });

  it('caps the body', async () => {
    await expect(fetchText(urlClient(`${base}/big`), '/metrics', { maxBytes: 10_000 })).rejects.toMatchObject({ code: 'TELEMETRY_BODY_TOO_LARGE' });
  });

  it('times out a server that never answers', async () => {
    await expect(fetchText(urlClient(`${base}/stall`), '/metrics', { timeoutMs: 150 })).rejects.toMatchObject({ code: 'TELEMETRY_SCRAPE_TIMEOUT' });
  });

  it('non-200 metrics is TELEMETRY_HTTP_STATUS; non-200 health is down; refused is TELEMETRY_SCRAPE_FAILED', async () => {
    await expect(scrapeVllmMetrics(urlClient(`${base}/err`))).rejects.toMatchObject({ code: 'TELEMETRY_HTTP_STATUS', details: { status: 503 } });
    expect(await probeHealth(urlClient(`${base}/err`))).toBe('down');
    expect(await probeHealth(urlClient(base))).toBe('ok');
    await expect(fetchText(urlClient('http://127.0.0.1:1'), '/metrics')).rejects.toMatchObject({ code: 'TELEMETRY_SCRAPE_FAILED' });
  });
});
