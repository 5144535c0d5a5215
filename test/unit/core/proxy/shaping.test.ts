import { describe, expect, it } from 'vitest';
import { ConfigSchema, type ProxyConfig } from '../../../../src-main/core/config/index.js';
import { ModelMaxTokensSchema } from '../../../../src-main/core/config/models-schema.js';
import { Exchange } from '../../../../src-main/core/proxy/exchange.js';
import { ModelRegistry } from '../../../../src-main/core/proxy/registry.js';
import { isWireError, shapeMaxTokens, timeoutsFor } from '../../../../src-main/core/proxy/shaping.js';
import { parseTraceparent, readTrace, requestIdProblem } from '../../../../src-main/core/proxy/stages/trace.js';
import { upstreamBody } from '../../../../src-main/core/proxy/stages/upstream.js';
import type { ServerResponse } from 'node:http';

const rules = (maxTokens: Record<string, unknown>) => ({ maxTokens: ModelMaxTokensSchema.parse(maxTokens) });

function config(models: unknown, more: Record<string, unknown> = {}) {
  return ConfigSchema.safeParse({
    hosts: [{ label: 'h', ssh: { host: '127.0.0.1', user: 'x', agent: true }, services: [{ id: 's', kind: 'vllm', remotePort: 8000, model: 'Qwen', aliases: ['qwen'], slots: 4 }, { id: 't', kind: 'vllm', remotePort: 8001, model: 'Gemma', slots: 4 }] }],
    proxy: { models, ...more },
  });
}

const issues = (r: ReturnType<typeof config>) => (r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`));

describe('shapeMaxTokens', () => {
  const r = rules({ default: 512, ceiling: 4096 });
  it('gives a chat or completions request without either field the default, as max_tokens', () => {
    expect(shapeMaxTokens({ model: 'm' }, 'chat', 'm', r)).toEqual({ added: { max_tokens: 512 }, changed: null, note: 'default 512' });
    expect(shapeMaxTokens({ model: 'm' }, 'completions', 'm', r)).toEqual({ added: { max_tokens: 512 }, changed: null, note: 'default 512' });
    // A present null is replaced, not added beside (a second key means different things to different parsers).
    expect(shapeMaxTokens({ model: 'm', max_tokens: null }, 'chat', 'm', r)).toEqual({ added: null, changed: { max_tokens: 512 }, note: 'default 512' });
  });

  it('leaves a request that names either field within the ceiling alone', () => {
    expect(shapeMaxTokens({ max_completion_tokens: 100 }, 'chat', 'm', r)).toEqual({ added: null, changed: null, note: null });
    expect(shapeMaxTokens({ max_tokens: 4096 }, 'chat', 'm', r)).toEqual({ added: null, changed: null, note: null });
  });

  it('clamps either name above the ceiling (the 39,868-token request of field notes §2)', () => {
    expect(shapeMaxTokens({ max_tokens: 39_868 }, 'chat', 'm', r)).toEqual({ added: null, changed: { max_tokens: 4096 }, note: 'clamped 39868->4096' });
    expect(shapeMaxTokens({ max_completion_tokens: 5000 }, 'chat', 'm', r)).toMatchObject({ changed: { max_completion_tokens: 4096 } });
    // completions has no max_completion_tokens: not ours to touch there.
    expect(shapeMaxTokens({ max_completion_tokens: 5000 }, 'completions', 'm', r)).toMatchObject({ added: { max_tokens: 512 } });
  });

  it('refuses above the ceiling when told to, naming the ceiling and the field', () => {
    const out = shapeMaxTokens({ max_completion_tokens: 5000 }, 'chat', 'Qwen', rules({ ceiling: 4096, overCeiling: 'refuse' }));
    expect(isWireError(out) && out).toMatchObject({ status: 400, code: 'max_tokens_over_ceiling', param: 'max_completion_tokens', extra: { ceiling: 4096 } });
    expect(isWireError(out) && out.message).toContain('ceiling of 4096 for model Qwen');
  });

  it('never touches embeddings or other endpoints, nor a model without rules', () => {
    expect(shapeMaxTokens({ input: 'x' }, 'embeddings', 'm', r)).toEqual({ added: null, changed: null, note: null });
    expect(shapeMaxTokens({}, 'chat', 'm', null)).toEqual({ added: null, changed: null, note: null });
  });
});

describe('upstreamBody with proxy.models', () => {
  const parsed = config({ qwen: { maxTokens: { default: 64, ceiling: 128 } } });
  if (!parsed.success) throw new Error('config');
  const settings: ProxyConfig = parsed.data.proxy;
  const registry = ModelRegistry.fromConfig(parsed.data);
  const qwen = registry.get('h/s')!;
  const gemma = registry.get('h/t')!;
  const ex = (stream = false) => {
    const e = new Exchange({} as ServerResponse, 0, 0);
    e.stream = stream;
    return e;
  };
  const body = (json: Record<string, unknown>, raw = JSON.stringify(json)) => ({ raw: Buffer.from(raw), json, model: json['model'] as string });

  it('hands the same bytes on when nothing changes', () => {
    const b = body({ model: 'Gemma', messages: [] });
    const out = upstreamBody(ex(), 'chat', b, gemma, settings);
    expect(out.ok && out.value.body).toBe(b.raw);
  });

  it('splices the default and include_usage into the bytes as sent', () => {
    const out = upstreamBody(ex(true), 'chat', body({ model: 'Qwen', stream: true }, '{"model":"Qwen",  "stream":true}'), qwen, settings);
    expect(out.ok && out.value.body.toString()).toBe('{"max_tokens":64,"stream_options":{"include_usage":true},"model":"Qwen",  "stream":true}');
  });

  it('renames an alias in the bytes as sent when nothing else changes, with the other splices beside it', () => {
    const raw = '{ "model" : "qwen", "max_tokens": 100,"messages":[{"role":"model","content":"{\\"model\\":1}"}]}';
    const out = upstreamBody(ex(), 'chat', body(JSON.parse(raw) as Record<string, unknown>, raw), qwen, settings);
    expect(out.ok && out.value.body.toString()).toBe(raw.replace('"qwen"', '"Qwen"'));
    const streamed = upstreamBody(ex(true), 'chat', body({ model: 'qwen', stream: true }, '{"model":"qwen","stream":true}'), qwen, settings);
    expect(streamed.ok && streamed.value.body.toString()).toBe('{"max_tokens":64,"stream_options":{"include_usage":true},"model":"Qwen","stream":true}');
  });

  it('re-serialises when a value changes (a clamp, an alias renamed to the served model)', () => {
    const e = ex();
    const out = upstreamBody(e, 'chat', body({ model: 'qwen', max_tokens: 1000 }), qwen, settings);
    expect(out.ok && JSON.parse(out.value.body.toString())).toEqual({ model: 'Qwen', max_tokens: 128 });
    expect(e.maxTokensNote).toBe('clamped 1000->128');
  });
});

describe('proxy.models config', () => {
  it('takes a model name or alias in any case', () => {
    expect(issues(config({ QWEN: { maxTokens: { default: 1, ceiling: 2 } }, Gemma: { timeouts: { idleMs: 90_000 } } }))).toEqual([]);
  });

  it('refuses a ceiling below the default, naming the field', () => {
    expect(issues(config({ qwen: { maxTokens: { default: 512, ceiling: 256 } } }))).toEqual([
      'proxy.models.qwen.maxTokens.ceiling: ceiling (256) is below default (512); a request given the default would be over the ceiling',
    ]);
  });

  it('refuses 0 and negative figures', () => {
    expect(issues(config({ qwen: { maxTokens: { default: 0 } } }))).toEqual(['proxy.models.qwen.maxTokens.default: must be between 1 and 10000000']);
    expect(issues(config({ qwen: { timeouts: { idleMs: -5 } } }))[0]).toContain('proxy.models.qwen.timeouts.idleMs: must be between');
  });

  it('refuses a key that names no served model, and two keys for one model', () => {
    expect(issues(config({ llama: { maxTokens: { default: 1 } } }))).toEqual(['proxy.models.llama: "llama" is not a served model or alias; proxy.models keys name one (groups are shaped by their models)']);
    expect(issues(config({ Qwen: { maxTokens: { default: 1 } }, qwen: { maxTokens: { default: 2 } } }))[0]).toContain('both shape model "Qwen"');
  });

  it("per-model timeouts replace the global ones for that model only, naming where each comes from", () => {
    const parsed = config({ qwen: { timeouts: { idleMs: 90_000, totalMs: 600_000 } } }, { upstreamIdleTimeoutMs: 120_000 });
    if (!parsed.success) throw new Error('config');
    const registry = ModelRegistry.fromConfig(parsed.data);
    expect(timeoutsFor(parsed.data.proxy, registry.get('h/s')!)).toMatchObject({ idleMs: 90_000, totalMs: 600_000, from: { idle: 'proxy.models.qwen.timeouts.idleMs', headers: 'proxy.upstreamHeadersTimeoutMs' } });
    expect(timeoutsFor(parsed.data.proxy, registry.get('h/t')!)).toMatchObject({ idleMs: 120_000, totalMs: null, from: { idle: 'proxy.upstreamIdleTimeoutMs' } });
  });
});

describe('trace validation', () => {
  it('keeps up to 128 printable ASCII characters', () => {
    expect(requestIdProblem('a'.repeat(128))).toBeNull();
    expect(requestIdProblem('order 42/step-3')).toBeNull();
    expect(requestIdProblem('a'.repeat(129))).toContain('129 characters');
    expect(requestIdProblem('a'.repeat(10_240))).toContain('at most 128');
    for (const bad of ['a\tb', 'a\x01b', 'a\x7fb', 'café']) expect(requestIdProblem(bad), JSON.stringify(bad)).toContain('printable ASCII');
  });

  it('parses a W3C traceparent and refuses what the format forbids', () => {
    expect(parseTraceparent('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')).toEqual({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736' });
    // A later version may carry more fields.
    expect(parseTraceparent('01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra')).toEqual({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736' });
    for (const bad of [
      '00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01',
      'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01',
      '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra',
      '00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01',
    ]) {
      expect('problem' in parseTraceparent(bad), bad).toBe(true);
    }
  });

  it('X-Request-Id wins over the traceparent as the trace; both are kept', () => {
    const e = new Exchange({} as ServerResponse, 0, 0);
    const r = readTrace(e, { 'x-request-id': 'app-1', traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' });
    expect(r.ok).toBe(true);
    expect(e.traceId).toBe('app-1');
    expect(e.traceparent).toBe('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01');
  });
});
