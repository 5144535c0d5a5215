// An OpenAI-style chat upstream for the proxy benchmarks, run as a child role.
// A streaming request gets `max_tokens` chunks, one every `bench_interval_ms`,
// after `bench_ttft_ms` (prefill: nothing, not even headers, is sent before
// it); the first chunk is due at the next multiple of the interval plus
// `bench_phase_ms`, so the bench decides how streams line up. With
// stream_options.include_usage every chunk carries `"usage":null` and a usage
// chunk comes before [DONE], as OpenAI and vLLM send them. Each chunk carries
// `emit_ns`, the monotonic clock (CLOCK_MONOTONIC, shared by processes on
// Linux) as it is written. `bench_headers_first`: the status and headers go out
// on arrival and only the chunks wait for the prefill (as vLLM's server does). A non-streaming request gets one JSON answer with
// its usage. Prints `READY <origin>`.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exitWithParent } from './children.js';

export interface StubAsk {
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  max_tokens?: number;
  bench_interval_ms?: number;
  bench_phase_ms?: number;
  bench_ttft_ms?: number;
  bench_headers_first?: boolean;
}

export const nowNs = (): number => Number(process.hrtime.bigint());

const HEAD = '{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1700000000,"model":"bench","choices":';

export function runSseStub(): void {
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      let ask: StubAsk;
      try {
        ask = JSON.parse(Buffer.concat(parts).toString()) as StubAsk;
      } catch {
        res.writeHead(400).end();
        return;
      }
      const chunks = Math.max(1, ask.max_tokens ?? 16);
      const intervalMs = ask.bench_interval_ms ?? 20;
      const usage = ask.stream_options?.include_usage === true;
      let timer: NodeJS.Timeout | null = null;
      res.on('close', () => {
        if (timer) clearTimeout(timer);
      });
      if (ask.stream !== true) {
        const body = `{"id":"c","object":"chat.completion","created":1,"model":"bench","choices":[{"index":0,"message":{"role":"assistant","content":"hello"},"finish_reason":"stop"}],"usage":{"prompt_tokens":9,"completion_tokens":${chunks},"total_tokens":${chunks + 9}}}`;
        timer = setTimeout(() => res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body), ask.bench_ttft_ms ?? 0);
        return;
      }
      const tail = usage ? ',"usage":null' : '';
      let i = 0;
      let startMs = 0;
      const emit = () => {
        const last = i === chunks - 1;
        let text = `data: ${HEAD}[{"index":0,"delta":{"content":" tok"},"logprobs":null,"finish_reason":${last ? '"stop"' : 'null'}}]${tail},"emit_ns":${nowNs()}}\n\n`;
        if (last) {
          if (usage) text += `data: ${HEAD}[],"usage":{"prompt_tokens":9,"completion_tokens":${chunks},"total_tokens":${chunks + 9}}}\n\n`;
          res.end(text + 'data: [DONE]\n\n');
          timer = null;
          return;
        }
        res.write(text);
        i++;
        timer = setTimeout(emit, Math.max(0, startMs + i * intervalMs - nowNs() / 1e6));
      };
      const headers = () => {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        res.flushHeaders();
      };
      if (ask.bench_headers_first) headers();
      const begin = () => {
        if (!res.headersSent) headers();
        startMs = Math.ceil(nowNs() / 1e6 / intervalMs) * intervalMs + (ask.bench_phase_ms ?? 0);
        timer = setTimeout(emit, Math.max(0, startMs - nowNs() / 1e6));
      };
      if (ask.bench_ttft_ms) timer = setTimeout(begin, ask.bench_ttft_ms);
      else begin();
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(0, '127.0.0.1', () => process.stdout.write(`READY http://127.0.0.1:${(server.address() as AddressInfo).port}\n`));
  process.on('SIGTERM', () => process.exit(0));
  exitWithParent();
}
