import { createServer, type IncomingMessage, type Server } from 'node:http';
import { mkdtempSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, runCliProcess } from '../helpers/console-process.js';

// `gpu-console bench run` as built, against a tiny OpenAI-compatible stub on
// 127.0.0.1: it streams a few tokens with usage, and answers 500 to any chat
// whose last message contains FAIL. Exit codes as documented in the command's
// help: 0 done, 1 above --max-error-rate, 2 bad input before the run.

async function body(req: IncomingMessage): Promise<string> {
  let s = '';
  for await (const c of req) s += (c as Buffer).toString('utf8');
  return s;
}

describe('gpu-console bench run against a local stub', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gc-bench-cli-'));
  let server: Server;
  let baseUrl = '';
  let chats = 0;

  beforeAll(async () => {
    assertBuilt();
    server = createServer((req, res) => {
      void (async () => {
        if (req.url === '/v1/models') {
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data: [{ id: 'stub', object: 'model' }] }));
          return;
        }
        if (req.url !== '/v1/chat/completions' || req.method !== 'POST') {
          res.writeHead(404).end();
          return;
        }
        chats++;
        const json = JSON.parse(await body(req)) as { messages: { content: string }[]; max_tokens: number };
        if (String(json.messages.at(-1)?.content).includes('FAIL')) {
          res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'stub failure', type: 'server_error' } }));
          return;
        }
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const n = Math.min(4, json.max_tokens);
        for (let i = 0; i < n; i++) {
          res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: `t${i} ` }, finish_reason: null }] })}\n\n`);
          await new Promise((r) => setTimeout(r, 2));
        }
        res.write(`data: ${JSON.stringify({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`);
        res.write(`data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 5, completion_tokens: n } })}\n\n`);
        res.end('data: [DONE]\n\n');
      })();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  function scenarioFile(name: string, prompts: unknown): string {
    const file = join(dir, `${name}.json`);
    const scenario = { name, target: { kind: 'url', baseUrl, model: 'stub' }, prompts, maxTokens: 4, levels: [1, 2], perLevel: { kind: 'requests', count: 4 } };
    writeFileSync(file, JSON.stringify(scenario));
    return file;
  }

  it('prints the table and exits 0 when every request succeeds', async () => {
    const r = await runCliProcess(['bench', 'run', '--scenario', scenarioFile('ok', { kind: 'synthetic', inputTokens: 8 })]);
    expect(r.stderr).toContain('done: 8 settled, 0 failed (0.0%)');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('### ok');
    expect(r.stdout).toContain('| workload | requests | TTFT p50/p95 | latency p50/p95 | output tok/s |');
    expect(r.stdout).toMatch(/^\| concurrency 1 \| 4 \| [\d.]+ \/ [\d.]+ s \| [\d.]+ \/ [\d.]+ s \| [\d.]+ \|$/m);
    expect(r.stdout).toMatch(/^\| concurrency 2 \| 4 \| /m);
    expect(chats).toBeGreaterThanOrEqual(8);
  }, 30_000);

  it('exits 1 when the error rate is above --max-error-rate, 0 when within it', async () => {
    const jsonl = join(dir, 'mixed.jsonl');
    writeFileSync(jsonl, '[{"role":"user","content":"hello"}]\n[{"role":"user","content":"please FAIL"}]\n');
    const file = scenarioFile('mixed', { kind: 'jsonl', file: jsonl });
    const strict = await runCliProcess(['bench', 'run', '--scenario', file]);
    expect(strict.code).toBe(1);
    const m = strict.stderr.match(/done: (\d+) settled, (\d+) failed \(([\d.]+)%\)/);
    expect(m).not.toBeNull();
    const rate = Number(m![3]) / 100;
    expect(rate).toBeGreaterThan(0);
    expect(rate).toBeLessThan(1);
    expect(strict.stdout).toMatch(/\| concurrency 1 \| 4 \(\d+ failed\) \|/);
    const lenient = await runCliProcess(['bench', 'run', '--scenario', file, '--max-error-rate', String(Math.min(1, rate + 0.01))]);
    expect(lenient.code).toBe(0);
    const tight = await runCliProcess(['bench', 'run', '--scenario', file, '--max-error-rate', String(rate - 0.01)]);
    expect(tight.code).toBe(1);
  }, 30_000);

  it('names the broken JSONL line and exits 2 before sending anything', async () => {
    const jsonl = join(dir, 'broken.jsonl');
    writeFileSync(jsonl, '[{"role":"user","content":"hello"}]\n\n{"messages": [ {"role":"user"\n');
    const before = chats;
    const r = await runCliProcess(['bench', 'run', '--scenario', scenarioFile('broken', { kind: 'jsonl', file: jsonl })]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('BENCH_PROMPT_FILE_INVALID');
    expect(r.stderr).toContain('broken.jsonl:3');
    expect(chats).toBe(before);
    const missing = await runCliProcess(['bench', 'run', '--scenario', scenarioFile('missing', { kind: 'jsonl', file: join(dir, 'nope.jsonl') })]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('BENCH_PROMPT_FILE_MISSING');
    expect(missing.stderr).toContain('nope.jsonl');
  }, 30_000);

  it('documents its exit codes in --help', async () => {
    const r = await runCliProcess(['--help']);
    expect(r.stdout).toContain('bench run --scenario FILE');
    expect(r.stdout).toMatch(/2 on bad input before the run/);
  });
});
