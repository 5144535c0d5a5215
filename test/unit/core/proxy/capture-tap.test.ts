import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { ConfigSchema, type ConfigInput } from '../../../../src-main/core/config/index.js';
import { CaptureRecorder, type PendingCapture } from '../../../../src-main/core/proxy/capture-tap.js';
import { Exchange } from '../../../../src-main/core/proxy/exchange.js';

// Which requests are captured: failures or a sample, for the models and tokens the config names, and
// nothing looked at while capture is off (issue #32 item 5).

const HOSTS: ConfigInput['hosts'] = [
  { label: 'h', ssh: { host: '127.0.0.1', user: 'x', agent: true }, services: [{ id: 'q', kind: 'vllm', remotePort: 8000, model: 'Qwen', aliases: ['qwen-alias'] }] },
  { label: 'g', ssh: { host: '127.0.0.1', user: 'x', agent: true }, services: [{ id: 'g', kind: 'vllm', remotePort: 8000, model: 'Gemma' }] },
];

function recorder(capture: Record<string, unknown>, draws: number[] = []) {
  const config = ConfigSchema.parse({ hosts: HOSTS, proxy: { capture } });
  const kept: PendingCapture[] = [];
  const rec = new CaptureRecorder(() => config, { add: (c) => kept.push(c) }, () => draws.shift() ?? 0.99);
  return { rec, kept };
}

/** One request through the recorder: arrival, a body, an answer written, the end. */
function run(rec: CaptureRecorder, o: { model?: string; client?: string; status?: number; errorCode?: string | null; body?: string; answer?: string; answerType?: string; endpoint?: Exchange['endpoint'] }): Exchange {
  const written: unknown[] = [];
  const res = { writeHead: () => res, write: (c: unknown) => written.push(c) > 0, end: (c?: unknown) => (c !== undefined && written.push(c), res) } as unknown as ServerResponse;
  const ex = new Exchange(res, 0, 1_700_000_000_000);
  rec.begin(ex, { headers: { authorization: 'Bearer gcp_secret', 'content-type': 'application/json' } } as unknown as IncomingMessage);
  ex.capture?.request(Buffer.from(o.body ?? '{"model":"x"}'));
  ex.res.writeHead(o.status ?? 200, { 'content-type': o.answerType ?? 'application/json' });
  ex.endpoint = o.endpoint ?? 'chat';
  ex.res.end(o.answer ?? '{"ok":true}');
  ex.model = o.model ?? 'Qwen';
  ex.client = o.client ?? 'app';
  ex.status = o.status ?? 200;
  ex.errorCode = o.errorCode ?? null;
  rec.end(ex);
  expect(written).toEqual([o.answer ?? '{"ok":true}']); // the wrapped response still writes what it is given
  return ex;
}

describe('CaptureRecorder', () => {
  it('off (the default): no tap at all', () => {
    const { rec, kept } = recorder({});
    const ex = new Exchange({} as ServerResponse, 0, 0);
    rec.begin(ex, { headers: {} } as IncomingMessage);
    expect(ex.capture).toBeNull();
    run(rec, { status: 500 });
    expect(kept).toEqual([]);
  });

  it('failures only: a failed request is kept with both bodies and the token; a success is dropped', () => {
    const { rec, kept } = recorder({ enabled: true });
    run(rec, { status: 200 });
    run(rec, { status: 503, errorCode: 'queue_full', answer: '{"error":{"code":"queue_full"}}' });
    run(rec, { status: 200, errorCode: 'upstream_error_event' });
    expect(kept.map((k) => [k.status, k.errorCode, k.reason])).toEqual([
      [503, 'queue_full', 'failure'],
      [200, 'upstream_error_event', 'failure'],
    ]);
    expect(kept[0]).toMatchObject({ clientToken: 'gcp_secret', model: 'Qwen', endpoint: '/v1/chat/completions' });
    expect(kept[0]!.request.bytes.toString()).toBe('{"model":"x"}');
    expect(kept[0]!.answer.bytes.toString()).toBe('{"error":{"code":"queue_full"}}');
    expect(kept[0]!.answer.headers).toEqual({ 'content-type': 'application/json' });
  });

  it("a 200 from a model endpoint that is not JSON or SSE is kept as a failure (the client got garbage); SSE and other endpoints' 200s are not", () => {
    const { rec, kept } = recorder({ enabled: true });
    run(rec, { status: 200, answerType: 'text/html; charset=utf-8', answer: '<html>login</html>' });
    run(rec, { status: 200, answerType: 'text/event-stream' });
    run(rec, { status: 200, answerType: 'text/plain', endpoint: 'models' });
    expect(kept.map((k) => [k.status, k.errorCode, k.endpoint])).toEqual([[200, 'unexpected_content_type', '/v1/chat/completions']]);
  });

  it('a sample of all: the draw decides at arrival; failures are not kept when failures is off', () => {
    const { rec, kept } = recorder({ enabled: true, failures: false, sampleRate: 0.5 }, [0.2, 0.7, 0.9]);
    run(rec, { status: 200 });
    run(rec, { status: 200 });
    run(rec, { status: 500 });
    expect(kept.map((k) => [k.status, k.reason])).toEqual([[200, 'sample']]);
  });

  it('models by any of their names, and tokens by name', () => {
    const { rec, kept } = recorder({ enabled: true, models: ['qwen-alias'], tokens: ['App'] });
    run(rec, { model: 'Qwen', status: 500 });
    run(rec, { model: 'Gemma', status: 500 });
    run(rec, { model: 'Qwen', client: 'other', status: 500 });
    expect(kept.map((k) => [k.model, k.client])).toEqual([['Qwen', 'app']]);
  });
});
