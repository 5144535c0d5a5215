// The demo's SGLang- and TEI-shaped servers: the simulated engine of
// vllm-simulator.ts behind another server's HTTP surface. What differs is what
// a console sees: the routes (no sleep endpoints; TEI has no /v1/models and no
// chat), /metrics in SGLang's names (prometheus_client multiprocess mode) or
// TEI's (metrics-exporter-prometheus), and their info endpoints. The shapes
// follow test/fixtures/sglang and test/fixtures/tei (see their SOURCE.txt).

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Engine } from './engine.js';
import type { Histogram } from './engine-metrics.js';
import { notFound, sendEmpty, sendJson } from './http-util.js';
import { pyFloat } from './metrics-text.js';
import { handleChat, handleCompletion, handleEmbeddings, type ApiContext } from './openai-api.js';
import type { EngineDialect, VllmServiceProfile } from './profiles.js';

export type { EngineDialect };

export const SGLANG_VERSION = '0.5.4';
export const TEI_VERSION = '1.9.3';

export interface DialectServer {
  readonly profile: VllmServiceProfile;
  readonly engine: Engine;
  readonly processStartMs: number;
}

/** One request to an SGLang- or TEI-shaped server (the simulator answers only while it is up). */
export function serveDialect(dialect: EngineDialect, server: DialectServer, api: ApiContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
  const route = `${req.method ?? 'GET'} ${path}`;
  return dialect === 'sglang' ? serveSglang(server, api, route, req, res) : serveTei(server, api, route, req, res);
}

async function serveSglang(server: DialectServer, api: ApiContext, route: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const p = server.profile;
  switch (route) {
    case 'GET /health':
    case 'GET /health_generate':
      return sendEmpty(res);
    case 'GET /v1/models':
      return sendJson(res, 200, {
        object: 'list',
        data: [{ id: p.servedModelName, object: 'model', created: Math.floor(server.processStartMs / 1000), owned_by: 'sglang', root: p.servedModelName, max_model_len: p.maxModelLen }],
      });
    case 'GET /get_server_info':
      return sendJson(res, 200, { model_path: p.root, served_model_name: p.servedModelName, tp_size: p.gpuIndices.length, context_length: p.maxModelLen, enable_metrics: true, version: SGLANG_VERSION });
    case 'GET /get_model_info':
      return sendJson(res, 200, { model_path: p.root, tokenizer_path: p.root, is_generation: p.kind === 'generate' });
    case 'GET /metrics':
      return sendText(res, sglangMetricsText(server));
    case 'POST /v1/chat/completions':
      return handleChat(api, req, res);
    case 'POST /v1/completions':
      return handleCompletion(api, req, res);
    case 'POST /v1/embeddings':
      return handleEmbeddings(api, req, res);
    default:
      throw notFound('Not Found');
  }
}

async function serveTei(server: DialectServer, api: ApiContext, route: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const p = server.profile;
  switch (route) {
    case 'GET /health':
    case 'GET /':
    case 'GET /ping':
      return sendEmpty(res);
    case 'GET /info':
      return sendJson(res, 200, {
        model_id: p.root.replace(/^\/models\//, ''),
        model_sha: null,
        model_dtype: 'float16',
        model_type: { embedding: { pooling: 'cls' } },
        max_concurrent_requests: 512,
        max_input_length: p.maxModelLen,
        max_batch_tokens: 16384,
        max_batch_requests: null,
        max_client_batch_size: 32,
        auto_truncate: false,
        tokenization_workers: 4,
        version: TEI_VERSION,
        sha: null,
        docker_label: null,
      });
    case 'GET /metrics':
      return sendText(res, teiMetricsText(server));
    case 'POST /v1/embeddings':
    case 'POST /embeddings':
      return handleEmbeddings(api, req, res);
    default:
      throw notFound('Not Found');
  }
}

function sendText(res: ServerResponse, text: string): void {
  res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** SGLang's /metrics: scheduler gauges per tp/pp rank, tokenizer counters and histograms per model (prometheus_client, multiprocess). */
export function sglangMetricsText(server: DialectServer): string {
  const p = server.profile;
  const m = server.engine.metrics;
  const snap = server.engine.snapshot();
  const capacity = p.numGpuBlocks * p.blockSize;
  const scheduler = `{model_name="${p.servedModelName}",engine_type="unified",tp_rank="0",pp_rank="0"}`;
  const tokenizer = `{model_name="${p.servedModelName}",engine_type="unified"}`;
  const out: string[] = [];
  const family = (name: string, type: string) => out.push(`# HELP ${name} Multiprocess metric`, `# TYPE ${name} ${type}`);
  const gauge = (name: string, v: number) => {
    family(name, 'gauge');
    out.push(`${name}${scheduler} ${pyFloat(v)}`);
  };
  const counter = (name: string, v: number) => {
    family(name, 'counter');
    out.push(`${name}_total${tokenizer} ${pyFloat(v)}`);
  };
  gauge('sglang:num_running_reqs', snap.running);
  gauge('sglang:num_used_tokens', snap.usedBlocks * p.blockSize);
  gauge('sglang:token_usage', snap.kvCacheUsage);
  gauge('sglang:gen_throughput', 0);
  gauge('sglang:num_queue_reqs', snap.waiting);
  gauge('sglang:num_grammar_queue_reqs', 0);
  gauge('sglang:cache_hit_rate', 0);
  gauge('sglang:max_total_num_tokens', capacity);
  counter('sglang:prompt_tokens', m.promptTokens);
  counter('sglang:generation_tokens', m.generationTokens);
  counter('sglang:cached_tokens', m.prefixCacheHits);
  counter('sglang:num_requests', m.requestSuccess.stop + m.requestSuccess.length + m.requestSuccess.abort);
  counter('sglang:num_aborted_requests', m.requestSuccess.abort);
  histogram(out, 'sglang:time_to_first_token_seconds', m.ttft, tokenizer, pyFloat);
  histogram(out, 'sglang:inter_token_latency_seconds', m.interTokenLatency, tokenizer, pyFloat);
  histogram(out, 'sglang:e2e_request_latency_seconds', m.e2eLatency, tokenizer, pyFloat);
  return out.join('\n') + '\n';
}

/** TEI's /metrics: no HELP, counters without `_total`, integer counts, Rust-printed floats, a blank line between families. */
export function teiMetricsText(server: DialectServer): string {
  const m = server.engine.metrics;
  const snap = server.engine.snapshot();
  const finished = m.requestSuccess.stop + m.requestSuccess.length;
  const blocks: string[] = [
    ['# TYPE te_request_count counter', `te_request_count{method="single"} ${finished + m.requestSuccess.abort}`].join('\n'),
    ['# TYPE te_request_success counter', `te_request_success{method="single"} ${finished}`].join('\n'),
    ['# TYPE te_queue_size gauge', `te_queue_size ${snap.waiting}`].join('\n'),
  ];
  if (m.requestSuccess.abort > 0) blocks.push(['# TYPE te_request_failure counter', `te_request_failure{err="inference"} ${m.requestSuccess.abort}`].join('\n'));
  const duration: string[] = [];
  histogram(duration, 'te_request_duration', m.e2eLatency, '', rustFloat, false);
  blocks.push(duration.join('\n'));
  const queue: string[] = [];
  histogram(queue, 'te_request_queue_duration', m.queueTime, '', rustFloat, false);
  blocks.push(queue.join('\n'));
  blocks.push(['# TYPE te_request_input_length histogram', `te_request_input_length_bucket{le="+Inf"} ${m.e2eLatency.count}`, `te_request_input_length_sum ${m.promptTokens}`, `te_request_input_length_count ${m.e2eLatency.count}`].join('\n'));
  return blocks.join('\n\n') + '\n';
}

/** Rust's Display of an f64: never an exponent, no trailing ".0". */
function rustFloat(v: number): string {
  if (v === Infinity) return '+Inf';
  const s = String(v);
  const m = /^(-?)(\d)(?:\.(\d+))?e([-+]\d+)$/.exec(s);
  if (!m) return s;
  const digits = m[2]! + (m[3] ?? '');
  const exp = Number(m[4]);
  if (exp < 0) return `${m[1]}0.${'0'.repeat(-exp - 1)}${digits}`;
  return `${m[1]}${digits.padEnd(exp + 1, '0')}`;
}

function histogram(out: string[], name: string, h: Histogram, labels: string, num: (v: number) => string, help = true): void {
  if (help) out.push(`# HELP ${name} Multiprocess metric`);
  out.push(`# TYPE ${name} histogram`);
  const withLe = (le: string) => (labels === '' ? `{le="${le}"}` : `${labels.slice(0, -1)},le="${le}"}`);
  h.buckets.forEach((le, i) => out.push(`${name}_bucket${withLe(num(le))} ${num(h.counts[i]!)}`));
  out.push(`${name}_bucket${withLe('+Inf')} ${num(h.count)}`);
  out.push(`${name}_count${labels} ${num(h.count)}`);
  out.push(`${name}_sum${labels} ${num(h.sum)}`);
}
