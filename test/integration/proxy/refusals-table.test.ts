import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { connect } from 'node:net';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { createOffPremCounter, type OffPremCounter } from '../../../src-main/core/base/index.js';
import type { ClientSpend, WireCode } from '../../../src-main/core/proxy/index.js';
import { DEFAULT_TOKEN_LIMITS } from '../../../src-preload/contract/index.js';
import { fakeFleet, type FakeFleet, type FakeFleetOptions } from './fake-fleet.js';
import { rawHttp, startStub, startStubProxy, type StubHandler, type StubProxy } from './helpers.js';
import { until } from '../../helpers/until.js';

// Every `error.code` the proxy can put on the wire, one row each, each produced
// through the real ProxyServer (fleet conditions through a real FleetResolver
// over a fake fleet): the status, an OpenAI-shaped body with OpenAI's `type`,
// and — for what a client should retry (429, 502, 503, 504) — Retry-After in
// whole seconds with a consistent retry-after-ms, at the value the cause
// calibrates; no Retry-After on the other client errors. `satisfies
// Record<WireCode, Row>` makes a new code without a row a type error, and the
// first test makes it a test failure as well (vitest does not typecheck).

type OpenAiType = 'invalid_request_error' | 'authentication_error' | 'permission_error' | 'not_found_error' | 'rate_limit_error' | 'insufficient_quota' | 'server_error';

/** One answer as the client got it: headers lower-cased, one value each. */
interface Answer {
  status: number;
  headers: Record<string, string | undefined>;
  text: string;
}

interface WireErrorBody {
  message: string;
  type: string;
  param: string | null;
  code: string;
  [extra: string]: unknown;
}

interface Case {
  /** The condition, in words. */
  name: string;
  run: () => Promise<Answer>;
  /** Retry-After (s) the cause calibrates, [min, max]; omitted: any whole number ≥ 1. */
  retryAfterS?: readonly [number, number];
  /** A person must act first: `x-action-required: true` and `error.action_required: true` (else neither). */
  actionRequired?: boolean;
  /** What else this answer must carry. */
  also?: (a: Answer, error: WireErrorBody) => void;
}

type Row =
  /** Answered before headers: the status and a JSON error body. */
  | { wire: 'json'; status: number; type: OpenAiType; cases: readonly [Case, ...Case[]] }
  /** Only ever after an SSE stream began: a `data: {"error":…}` frame (no headers can follow); `status` is the one recorded. */
  | { wire: 'sse-frame'; status: number; type: OpenAiType; cases: readonly [Case, ...Case[]] }
  /** Never sent to a client. */
  | { wire: 'never'; reason: string; check?: () => Promise<void> };

const RETRYABLE = new Set([429, 502, 503, 504]);

// --- set-ups -------------------------------------------------------------------

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const MSG = [{ role: 'user', content: 'x' }];
const CHAT = JSON.stringify({ model: 'M', messages: MSG });

const completion = JSON.stringify({
  id: 'c1',
  object: 'chat.completion',
  created: 1,
  model: 'M',
  choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
});

const answerOk: StubHandler = (_req, res) => {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(completion);
};

/** An upstream that holds every request until released (a slot stays busy meanwhile). */
function gate() {
  const held: ServerResponse[] = [];
  const handler: StubHandler = (_req, res) => {
    held.push(res);
  };
  const release = () => {
    for (const res of held.splice(0)) {
      if (res.destroyed || res.writableEnded) continue;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(completion);
    }
  };
  return { handler, held, release };
}

interface Env {
  p: StubProxy;
  token: string;
  fleet: FakeFleet | null;
}

type ProxySettings = Parameters<typeof startStubProxy>[1];

/** A stub upstream `h/s` serving model M (slots 4 unless told), the real proxy in front; with `fleet`, a FleetResolver over a fake fleet. */
async function env(o: { handler?: StubHandler; proxy?: ProxySettings; slots?: number; url?: string; fleet?: Omit<FakeFleetOptions, 'url'>; offPrem?: OffPremCounter; spend?: ClientSpend } = {}): Promise<Env> {
  const stub = await startStub(o.handler ?? answerOk);
  cleanups.push(() => stub.close());
  const url = o.url ?? stub.url;
  const fleet = o.fleet ? fakeFleet({ url, ...o.fleet }) : null;
  const p = await startStubProxy([{ label: 'h', id: 's', model: 'M', url, slots: o.slots ?? 4 }], o.proxy ?? {}, fleet?.resolver, { ...(o.offPrem ? { offPrem: o.offPrem } : {}), ...(o.spend ? { spend: o.spend } : {}) });
  cleanups.push(() => p.close());
  return { p, token: p.token('t', 'interactive'), fleet };
}

interface Send {
  path?: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** null: no Authorization header. */
  token?: string | null;
}

async function send(e: Env, s: Send = {}): Promise<Answer> {
  const token = s.token === undefined ? e.token : s.token;
  const method = s.method ?? 'POST';
  const r = await request(e.p.proxy.origin + (s.path ?? '/v1/chat/completions'), {
    method,
    headers: { ...(token !== null ? { authorization: `Bearer ${token}` } : {}), 'content-type': 'application/json', ...s.headers },
    body: method === 'GET' ? undefined : (s.body ?? CHAT),
  });
  const headers: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(r.headers)) headers[k] = Array.isArray(v) ? v.join(', ') : v;
  return { status: r.statusCode, headers, text: await r.body.text() };
}

/** The bytes of a raw HTTP/1.1 answer (rawHttp), as an Answer. */
function parseRaw(raw: string): Answer {
  const end = raw.indexOf('\r\n\r\n');
  const lines = (end < 0 ? raw : raw.slice(0, end)).split('\r\n');
  const headers: Record<string, string | undefined> = {};
  for (const line of lines.slice(1)) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  return { status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1] ?? 0), headers, text: end < 0 ? '' : raw.slice(end + 4) };
}

async function raw(e: Env, head: string[], body = ''): Promise<Answer> {
  const text = [...head, `content-length: ${Buffer.byteLength(body)}`, 'connection: close', '', body].join('\r\n');
  return parseRaw(await rawHttp(e.p.proxy.origin, text));
}

/** Polls a condition the proxy exposes (queue depth, a held upstream request); fails after `timeoutMs`. */
/** A request whose upstream holds it: `answer` comes when the gate opens (or the proxy cuts it). */
async function inFlight(e: Env, g: ReturnType<typeof gate>): Promise<{ answer: Promise<Answer> }> {
  const n = g.held.length;
  const answer = send(e);
  // A blocker nobody reads may end in a socket error when the proxy closes: that is not this test's failure.
  answer.catch(() => undefined);
  await until(() => g.held.length > n, { what: 'the upstream to hold a request', timeoutMs: 5_000, intervalMs: 5 });
  return { answer };
}

async function gated(o: Parameters<typeof env>[0] = {}) {
  const g = gate();
  const e = await env({ ...o, handler: g.handler });
  // Runs before the proxy and stub close (cleanups run in reverse).
  cleanups.push(() => g.release());
  return { e, g };
}

const fleetEnv = (fleet: Omit<FakeFleetOptions, 'url'>, proxy: ProxySettings = { holdBudgetMs: { interactive: 1_000 } }) => env({ fleet, proxy });

const hostKey = (status: 'changed' | 'revoked') => ({
  status,
  role: 'host' as const,
  endpoint: '127.0.0.1:22',
  keyType: 'ssh-ed25519',
  fingerprint: 'SHA256:new',
  knownFingerprints: ['SHA256:old'],
  knownSource: 'known_hosts' as const,
});

const noRetryHint = (a: Answer) => expect(a.headers['x-should-retry']).toBe('false');

// --- the table -------------------------------------------------------------------

const TABLE = {
  not_found: {
    wire: 'json',
    status: 404,
    type: 'not_found_error',
    cases: [{ name: 'a path the proxy does not route', run: async () => send(await env(), { path: '/v1/nope' }) }],
  },
  forbidden_host: {
    wire: 'json',
    status: 403,
    type: 'permission_error',
    cases: [{ name: 'a Host that is not loopback (DNS rebinding)', run: async () => send(await env(), { headers: { host: 'evil.example:80' } }) }],
  },
  missing_host: {
    wire: 'json',
    status: 400,
    type: 'invalid_request_error',
    cases: [
      {
        // With no Host line at all, Node (requireHostHeader) answers a bare 400 before the proxy sees the request.
        name: 'an HTTP/1.1 request with an empty Host header',
        run: async () => {
          const e = await env();
          return raw(e, ['POST /v1/chat/completions HTTP/1.1', 'host:', `authorization: Bearer ${e.token}`, 'content-type: application/json'], CHAT);
        },
      },
    ],
  },
  invalid_path: {
    wire: 'json',
    status: 400,
    type: 'invalid_request_error',
    cases: [
      {
        name: 'a malformed percent-escape in the path',
        run: async () => {
          const e = await env();
          return raw(e, ['POST /v1/chat%zzcompletions HTTP/1.1', `host: 127.0.0.1:${new URL(e.p.proxy.origin).port}`, `authorization: Bearer ${e.token}`, 'content-type: application/json'], CHAT);
        },
        also: noRetryHint,
      },
    ],
  },
  invalid_idempotency_key: {
    wire: 'json',
    status: 400,
    type: 'invalid_request_error',
    cases: [{ name: 'an Idempotency-Key with a space', run: async () => send(await env(), { headers: { 'idempotency-key': 'has space' } }) }],
  },
  missing_model: {
    wire: 'json',
    status: 400,
    type: 'invalid_request_error',
    cases: [{ name: 'a body without a model', run: async () => send(await env(), { body: '{"messages":[]}' }), also: (_a, error) => expect(error.param).toBe('model') }],
  },
  method_not_allowed: {
    wire: 'json',
    status: 405,
    type: 'invalid_request_error',
    cases: [{ name: 'GET on /v1/chat/completions', run: async () => send(await env(), { method: 'GET' }), also: (a) => expect(a.headers['allow']).toBe('POST') }],
  },
  model_not_found: {
    wire: 'json',
    status: 404,
    type: 'not_found_error',
    cases: [
      { name: 'a model nobody serves', run: async () => send(await env(), { body: JSON.stringify({ model: 'gpt-4o', messages: MSG }) }), also: (_a, error) => expect(error.param).toBe('model') },
      { name: 'GET /v1/models/{unknown}', run: async () => send(await env(), { method: 'GET', path: '/v1/models/gpt-4o' }) },
    ],
  },
  missing_token: {
    wire: 'json',
    status: 401,
    type: 'authentication_error',
    cases: [{ name: 'no Authorization header', run: async () => send(await env(), { token: null }), also: noRetryHint }],
  },
  invalid_token: {
    wire: 'json',
    status: 401,
    type: 'authentication_error',
    cases: [
      { name: 'an unknown token', run: async () => send(await env(), { token: 'gcp_nope' }), also: noRetryHint },
      { name: 'an Authorization that is not Bearer', run: async () => send(await env(), { token: null, headers: { authorization: 'Basic eDp5' } }), also: noRetryHint },
    ],
  },
  token_revoked: {
    wire: 'json',
    status: 401,
    type: 'authentication_error',
    cases: [
      {
        name: 'a token revoked in the console',
        run: async () => {
          const e = await env();
          const token = e.p.token('soon-revoked');
          e.p.tokens.revoke('soon-revoked');
          return send(e, { token });
        },
        also: noRetryHint,
      },
    ],
  },
  invalid_priority: {
    wire: 'json',
    status: 400,
    type: 'invalid_request_error',
    cases: [{ name: 'an unreadable X-Priority', run: async () => send(await env(), { headers: { 'x-priority': 'urgent!!' } }) }],
  },
  class_not_allowed: {
    wire: 'json',
    status: 403,
    type: 'permission_error',
    cases: [
      {
        name: 'a batch token asking for interactive',
        run: async () => {
          const e = await env();
          return send(e, { token: e.p.token('batcher', 'batch'), headers: { 'x-priority': 'interactive' } });
        },
        also: noRetryHint,
      },
    ],
  },
  unsupported_media_type: {
    wire: 'json',
    status: 415,
    type: 'invalid_request_error',
    cases: [{ name: 'a text/plain body', run: async () => send(await env(), { headers: { 'content-type': 'text/plain' } }) }],
  },
  invalid_json: {
    wire: 'json',
    status: 400,
    type: 'invalid_request_error',
    cases: [{ name: 'a body cut in the middle of JSON', run: async () => send(await env(), { body: '{"model": "M",' }) }],
  },
  invalid_request: {
    wire: 'json',
    status: 400,
    type: 'invalid_request_error',
    cases: [{ name: 'a JSON array for a body', run: async () => send(await env(), { body: '[1,2]' }) }],
  },
  body_too_large: {
    wire: 'json',
    status: 413,
    type: 'invalid_request_error',
    cases: [
      {
        name: 'a body over maxBodyBytes',
        run: async () => send(await env({ proxy: { maxBodyBytes: 1024 } }), { body: JSON.stringify({ model: 'M', pad: 'x'.repeat(2_000) }) }),
        also: noRetryHint,
      },
    ],
  },
  body_timeout: {
    wire: 'json',
    status: 408,
    type: 'invalid_request_error',
    cases: [
      {
        name: 'a body that stops arriving before bodyTimeoutMs',
        run: async () => {
          const e = await env({ proxy: { bodyTimeoutMs: 150 } });
          const head = ['POST /v1/chat/completions HTTP/1.1', 'host: 127.0.0.1', `authorization: Bearer ${e.token}`, 'content-type: application/json', 'content-length: 100'];
          return parseRaw(await rawHttp(e.p.proxy.origin, [...head, '', '{"mo'].join('\r\n')));
        },
      },
    ],
  },
  queue_full: {
    wire: 'json',
    status: 429,
    type: 'rate_limit_error',
    cases: [
      {
        name: 'the one slot busy and a queue bound of 0 (no service time measured: one round of 1 s)',
        run: async () => {
          const { e, g } = await gated({ slots: 1, proxy: { queueBound: { interactive: 0 } } });
          await inFlight(e, g);
          return send(e);
        },
        retryAfterS: [1, 1],
        also: (a, error) => {
          expect(a.headers['x-queue-depth']).toBe('0');
          expect(error['queue_depth']).toBe(0);
        },
      },
    ],
  },
  hold_timeout: {
    wire: 'json',
    status: 429,
    type: 'rate_limit_error',
    cases: [
      {
        name: 'queued past the class hold budget (100 ms) behind a busy slot',
        run: async () => {
          const { e, g } = await gated({ slots: 1, proxy: { holdBudgetMs: { interactive: 100 } } });
          await inFlight(e, g);
          return send(e);
        },
        retryAfterS: [1, 1],
        also: (a) => expect(a.headers['x-queue-depth']).toBe('0'),
      },
    ],
  },
  upstream_draining: {
    wire: 'json',
    status: 503,
    type: 'server_error',
    cases: [
      {
        name: 'a new request while the upstream drains for maintenance (deadline 5 s)',
        run: async () => {
          const e = await env();
          await e.p.proxy.drain('h/s', { deadlineMs: 5_000 });
          return send(e);
        },
        retryAfterS: [4, 5],
        also: (a, error) => {
          expect(a.headers['x-queue-depth']).toBe('0');
          expect(error['drain_deadline_ms']).toBeGreaterThan(4_000);
        },
      },
      {
        name: 'a new request while the upstream drains before a sleep (deadline 3 s)',
        run: async () => {
          const e = await env();
          await e.p.proxy.drain('h/s', { deadlineMs: 3_000, purpose: 'sleep' });
          return send(e);
        },
        retryAfterS: [2, 3],
      },
      {
        name: 'an in-flight request cut at the drain deadline (past the deadline: 5 s)',
        run: async () => {
          const { e, g } = await gated();
          const cut = await inFlight(e, g);
          await e.p.proxy.drain('h/s', { deadlineMs: 100 });
          return cut.answer;
        },
        retryAfterS: [5, 5],
      },
    ],
  },
  proxy_shutting_down: {
    wire: 'json',
    status: 503,
    type: 'server_error',
    cases: [
      {
        name: 'a queued request when close() begins',
        run: async () => {
          const { e, g } = await gated({ slots: 1 });
          await inFlight(e, g);
          const queued = send(e);
          await until(() => e.p.proxy.snapshot().queued === 1, { what: 'a queued request', timeoutMs: 5_000, intervalMs: 5 });
          const closing = e.p.proxy.close(2_000);
          const answer = await queued;
          g.release();
          await closing;
          return answer;
        },
        retryAfterS: [5, 5],
      },
      {
        name: 'an in-flight request cut at the end of close()\'s grace',
        run: async () => {
          const { e, g } = await gated();
          const cut = await inFlight(e, g);
          await e.p.proxy.close(100);
          return cut.answer;
        },
        retryAfterS: [5, 5],
      },
    ],
  },
  model_sleeping: {
    wire: 'json',
    status: 503,
    type: 'server_error',
    cases: [
      {
        name: 'level 2, no wake measured, no standing approval (60 s)',
        run: async () => send(await fleetEnv({ service: { sleep: 'asleep-2' } })),
        retryAfterS: [60, 60],
        actionRequired: true,
        also: (_a, error) => expect(error).toMatchObject({ sleep_level: 2, expected_wake_ms: 60_000, wake_estimate: 'default' }),
      },
      {
        name: 'level 1, no wake measured, no standing approval (10 s)',
        run: async () => send(await fleetEnv({ service: { sleep: 'asleep-1' } })),
        retryAfterS: [10, 10],
        actionRequired: true,
        also: (_a, error) => expect(error).toMatchObject({ sleep_level: 1, expected_wake_ms: 10_000, wake_estimate: 'default' }),
      },
      {
        name: 'level 2 with a measured wake of 4.2 s (5 s)',
        run: async () => send(await fleetEnv({ service: { sleep: 'asleep-2' }, estimates: { expectedWakeMs: () => 4_200, wasMeasured: () => true } })),
        retryAfterS: [5, 5],
        actionRequired: true,
        also: (_a, error) => expect(error).toMatchObject({ expected_wake_ms: 4_200, wake_estimate: 'measured' }),
      },
      {
        name: 'a standing approval, but the 60 s wake does not fit the 1 s hold budget: refused at once',
        run: async () => send(await fleetEnv({ service: { sleep: 'asleep-2' }, wakeAllowed: true })),
        retryAfterS: [60, 60],
        also: (_a, error) => expect(error).toMatchObject({ reason: 'waking', expected_back_ms: 60_000 }),
      },
    ],
  },
  model_waking: {
    wire: 'json',
    status: 503,
    type: 'server_error',
    cases: [
      {
        name: 'held for its 400 ms budget while a wake (measured 300 ms) runs and does not finish',
        run: async () => {
          const e = await fleetEnv(
            { service: { sleep: 'asleep-1' }, wakeAllowed: true, estimates: { expectedWakeMs: () => 300, wasMeasured: () => true } },
            { holdBudgetMs: { interactive: 400 } },
          );
          const a = await send(e);
          expect(e.fleet!.wakeRequests).toEqual(['h/s']);
          return a;
        },
        retryAfterS: [1, 1],
        also: (a) => {
          expect(a.headers['x-hold-reason']).toBe('waking');
          expect(Number(a.headers['x-hold-ms'])).toBeGreaterThanOrEqual(350);
        },
      },
    ],
  },
  model_restarting: {
    wire: 'json',
    status: 503,
    type: 'server_error',
    cases: [
      {
        name: 'draining for a restart: deadline 3 s + expected restart 4 s, past the 1 s hold budget',
        run: async () => {
          const e = await env({ proxy: { holdBudgetMs: { interactive: 1_000 } } });
          await e.p.proxy.drain('h/s', { deadlineMs: 3_000, purpose: 'restart', expectedActionMs: 4_000 });
          return send(e);
        },
        retryAfterS: [6, 7],
        also: (_a, error) => expect(error['expected_back_ms']).toBeGreaterThan(6_000),
      },
    ],
  },
  tunnel_down: {
    wire: 'json',
    status: 503,
    type: 'server_error',
    cases: [
      {
        name: 'SSH reconnecting, next attempt in 7 s (+1.5 s handshake)',
        run: async () => send(await fleetEnv({ host: { state: 'reconnecting', nextRetryAt: Date.now() + 7_000 } })),
        retryAfterS: [8, 9],
        also: (_a, error) => expect(error).toMatchObject({ host_state: 'reconnecting', reason: 'reconnecting' }),
      },
      {
        name: 'SSH connecting, no attempt scheduled (the handshake: 2 s)',
        run: async () => send(await fleetEnv({ host: { state: 'connecting', nextRetryAt: null } })),
        retryAfterS: [2, 2],
      },
      {
        name: 'host connected but the tunnel has no listener (3 s)',
        run: async () => send(await fleetEnv({ tunnelOpen: false })),
        retryAfterS: [3, 3],
      },
      {
        name: 'tunnel up on paper, its probe timed out: presumed dead until SSH reconnects (8 s)',
        run: async () =>
          send(
            await fleetEnv({
              service: {
                tunnel: { state: 'degraded', localUrl: null, lastError: null, lastProbe: { ok: false, at: Date.now(), latencyMs: 5_000, error: { code: 'FLEET_PROBE_TIMEOUT', message: 'no answer in 5 s' } } },
              },
            }),
          ),
        retryAfterS: [8, 8],
      },
      {
        name: 'host disconnected in the console: a person must connect it (600 s)',
        run: async () => send(await fleetEnv({ host: { state: 'disconnected' } })),
        retryAfterS: [600, 600],
        actionRequired: true,
      },
    ],
  },
  host_awaiting_trust: {
    wire: 'json',
    status: 503,
    type: 'server_error',
    cases: [{ name: 'a host key waiting for a person to confirm it', run: async () => send(await fleetEnv({ host: { state: 'awaiting-trust' } })), retryAfterS: [600, 600], actionRequired: true }],
  },
  host_key_changed: {
    wire: 'json',
    status: 503,
    type: 'server_error',
    cases: [
      { name: 'SSH failed on a changed host key', run: async () => send(await fleetEnv({ host: { state: 'failed', hostKey: hostKey('changed') } })), retryAfterS: [600, 600], actionRequired: true },
      { name: 'SSH failed on a revoked host key', run: async () => send(await fleetEnv({ host: { state: 'failed', hostKey: hostKey('revoked') } })), retryAfterS: [600, 600], actionRequired: true },
    ],
  },
  host_failed: {
    wire: 'json',
    status: 503,
    type: 'server_error',
    cases: [
      {
        name: 'SSH failed (authentication) and will not retry by itself',
        run: async () => send(await fleetEnv({ host: { state: 'failed', lastError: { code: 'SSH_AUTH_FAILED', message: 'all methods refused', at: Date.now() } } })),
        retryAfterS: [600, 600],
        actionRequired: true,
      },
    ],
  },
  upstream_unreachable: {
    wire: 'json',
    status: 502,
    type: 'server_error',
    cases: [
      {
        name: 'nothing listens where the upstream should be',
        run: async () => {
          const gone = await startStub(answerOk);
          await gone.close();
          return send(await env({ url: gone.url }));
        },
        retryAfterS: [1, 1],
      },
      {
        name: 'the upstream closes the connection without answering',
        run: async () => send(await env({ handler: (req) => req.socket.destroy() })),
        retryAfterS: [1, 1],
      },
    ],
  },
  upstream_timeout: {
    wire: 'json',
    status: 504,
    type: 'server_error',
    cases: [
      {
        name: 'no response headers within upstreamHeadersTimeoutMs (1 s)',
        run: async () => send((await gated({ proxy: { upstreamHeadersTimeoutMs: 1_000 } })).e),
        retryAfterS: [1, 1],
      },
    ],
  },
  upstream_reset: {
    wire: 'sse-frame',
    status: 502,
    type: 'server_error',
    cases: [
      {
        name: 'the upstream breaks off a stream after its first chunk',
        run: async () => {
          const e = await env({
            handler: (_req, res) => {
              res.writeHead(200, { 'content-type': 'text/event-stream' });
              res.write('data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"a"}}]}\n\n');
              setTimeout(() => res.socket?.destroy(), 20);
            },
          });
          const a = await send(e, { body: JSON.stringify({ model: 'M', stream: true, messages: MSG }) });
          expect(lastRow(e.p)).toEqual({ status: 502, error_code: 'upstream_reset' });
          return a;
        },
      },
    ],
  },
  upstream_key_unavailable: {
    wire: 'json',
    status: 503,
    type: 'server_error',
    cases: [
      {
        name: 'the upstream\'s apiKeyRef cannot be read (no secret store)',
        run: async () => send(await env({ proxy: { upstreams: { 'h/s': { apiKeyRef: 'upstream-key' } } } })),
        retryAfterS: [30, 30],
      },
    ],
  },
  upstream_off_prem: {
    wire: 'json',
    status: 502,
    type: 'server_error',
    cases: [
      {
        name: 'an upstream resolved outside loopback and the tunnels is refused and counted, never dialled',
        run: async () => {
          const counter = createOffPremCounter();
          const a = await send(await env({ url: 'http://192.0.2.7:8000', offPrem: counter }));
          expect(counter.counts()).toMatchObject({ proxy: 1, lifecycle: 0, probe: 0 });
          return a;
        },
        retryAfterS: [600, 600],
      },
    ],
  },
  idempotency_conflict: {
    wire: 'json',
    status: 409,
    type: 'invalid_request_error',
    cases: [
      {
        name: 'an Idempotency-Key used again with another body',
        run: async () => {
          const e = await env();
          const headers = { 'idempotency-key': 'order-42' };
          expect((await send(e, { headers })).status).toBe(200);
          return send(e, { headers, body: JSON.stringify({ model: 'M', messages: [{ role: 'user', content: 'other' }] }) });
        },
        also: noRetryHint,
      },
    ],
  },
  invalid_request_id: {
    wire: 'json',
    status: 400,
    type: 'invalid_request_error',
    cases: [
      { name: 'an X-Request-Id of 10 kB', run: async () => send(await env(), { headers: { 'x-request-id': 'a'.repeat(10_240) } }), also: (_a, error) => expect(error.param).toBe('x-request-id') },
      { name: 'an X-Request-Id with a tab', run: async () => send(await env(), { headers: { 'x-request-id': 'a\tb' } }) },
    ],
  },
  invalid_traceparent: {
    wire: 'json',
    status: 400,
    type: 'invalid_request_error',
    cases: [{ name: 'a traceparent with an all-zero trace-id', run: async () => send(await env(), { headers: { traceparent: `00-${'0'.repeat(32)}-${'1'.repeat(16)}-01` } }) }],
  },
  max_tokens_over_ceiling: {
    wire: 'json',
    status: 400,
    type: 'invalid_request_error',
    cases: [
      {
        name: 'max_tokens above the model\'s ceiling, with overCeiling: refuse',
        run: async () => send(await env({ proxy: { models: { M: { maxTokens: { ceiling: 64, overCeiling: 'refuse' } } } } }), { body: JSON.stringify({ model: 'M', messages: MSG, max_tokens: 65 }) }),
        also: (_a, error) => {
          expect(error.param).toBe('max_tokens');
          expect(error['ceiling']).toBe(64);
        },
      },
    ],
  },
  client_closed: {
    wire: 'never',
    reason: 'the client is gone, so nothing can be sent; the request is recorded as 499 client_closed',
    check: async () => {
      const e = await env();
      await new Promise<void>((resolve) => {
        const s = connect(Number(new URL(e.p.proxy.origin).port), '127.0.0.1', () => {
          s.write(`POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${e.token}\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"mo`);
          s.destroy();
          resolve();
        });
      });
      await until(() => e.p.rows() === 1, { what: 'the request row', timeoutMs: 5_000, intervalMs: 5 });
      expect(lastRow(e.p)).toEqual({ status: 499, error_code: 'client_closed' });
    },
  },
  // per-client limits (client-limits.ts), on tokens made with them in the repository
  model_not_allowed: {
    wire: 'json',
    status: 403,
    type: 'permission_error',
    cases: [
      {
        name: 'a token allowed only another model asking for M',
        run: async () => {
          const e = await env();
          const token = e.p.tokens.create('only-other', 'interactive', { ...DEFAULT_TOKEN_LIMITS, models: ['other'] }).token;
          return send(e, { token });
        },
        also: (a, error) => {
          noRetryHint(a);
          expect(error).toMatchObject({ param: 'model', model: 'M', token: 'only-other', allowed: ['other'] });
        },
      },
    ],
  },
  rate_limit_rpm: {
    wire: 'json',
    status: 429,
    type: 'rate_limit_error',
    cases: [
      {
        name: 'a token of 1 request a minute sending its second (the bucket refills in 60 s)',
        run: async () => {
          const e = await env();
          const token = e.p.tokens.create('one-a-minute', 'interactive', { ...DEFAULT_TOKEN_LIMITS, rpm: 1 }).token;
          expect((await send(e, { token })).status).toBe(200);
          return send(e, { token });
        },
        retryAfterS: [59, 60],
        also: (a, error) => {
          expect(error).toMatchObject({ limit: 'rpm', limit_value: 1, token: 'one-a-minute' });
          expect(a.headers['x-ratelimit-limit-requests']).toBe('1');
        },
      },
    ],
  },
  rate_limit_tpm: {
    wire: 'json',
    status: 429,
    type: 'rate_limit_error',
    cases: [
      {
        name: 'a token of 10 tokens a minute: the first request takes the bucket (reserved about 15, settled at the 2 used), the second waits',
        run: async () => {
          const e = await env();
          const token = e.p.tokens.create('ten-tokens', 'interactive', { ...DEFAULT_TOKEN_LIMITS, tpm: 10 }).token;
          expect((await send(e, { token })).status).toBe(200);
          return send(e, { token });
        },
        // 2 used of 10: 8 left, the next needs a full 10 (its estimate is over a minute's allowance): 2 × 6 s.
        retryAfterS: [12, 12],
        also: (_a, error) => expect(error).toMatchObject({ limit: 'tpm', limit_value: 10, token: 'ten-tokens' }),
      },
    ],
  },
  token_expired: {
    wire: 'json',
    status: 401,
    type: 'authentication_error',
    cases: [
      {
        name: 'a token whose expiry has passed',
        run: async () => {
          const e = await env();
          const token = e.p.tokens.create('expired', 'interactive', { ...DEFAULT_TOKEN_LIMITS, expiresAt: Date.now() - 1 }).token;
          const a = await send(e, { token });
          // Refused, and still the token's row: per-client refusals count against the client.
          expect(lastRow(e.p)).toEqual({ status: 401, error_code: 'token_expired' });
          return a;
        },
        also: (a, error) => {
          noRetryHint(a);
          expect(String(error['expired_at'])).toMatch(/^\d{4}-\d{2}-\d{2}T/);
        },
      },
    ],
  },
  budget_exhausted: {
    wire: 'json',
    status: 402,
    type: 'insufficient_quota',
    cases: [
      {
        name: 'a token whose month spend ($12) reached its $10 budget, budgetAction refuse',
        run: async () => {
          const e = await env({ spend: { spentUsd: () => 12 } });
          const token = e.p.tokens.create('spent', 'interactive', { ...DEFAULT_TOKEN_LIMITS, budgetUsd: 10 }).token;
          return send(e, { token });
        },
        also: (a, error) => {
          noRetryHint(a);
          expect(error).toMatchObject({ token: 'spent', budget_usd: 10, spent_usd: 12 });
        },
      },
    ],
  },
  internal_error: {
    wire: 'never',
    reason: 'the safety net for a bug: a stage that throws, or a path that ends without answering (server.ts handle/finish); no request reaches it by design',
  },
} satisfies Record<WireCode, Row>;

function lastRow(p: StubProxy): unknown {
  p.log.flush();
  return p.store.db.prepare('SELECT status, error_code FROM requests ORDER BY seq DESC LIMIT 1').get();
}

// --- the checks ------------------------------------------------------------------

/** Retry-After in whole seconds ≥ 1 with retry-after-ms that rounds up to it, within `range` when given; neither on a client error. */
function checkRetryAfter(status: number, headers: Answer['headers'], range: readonly [number, number] | undefined): void {
  const s = headers['retry-after'];
  const ms = headers['retry-after-ms'];
  if (!RETRYABLE.has(status)) {
    expect(s, 'no Retry-After on a client error').toBeUndefined();
    expect(ms, 'no retry-after-ms on a client error').toBeUndefined();
    return;
  }
  expect(s, 'Retry-After (whole seconds)').toMatch(/^\d+$/);
  expect(ms, 'retry-after-ms').toMatch(/^\d+$/);
  expect(Number(s)).toBeGreaterThanOrEqual(1);
  expect(Math.ceil(Number(ms) / 1000), `retry-after-ms ${ms} against Retry-After ${s}`).toBe(Number(s));
  if (range) {
    expect(Number(s), `Retry-After for this cause: ${range[0]}–${range[1]} s`).toBeGreaterThanOrEqual(range[0]);
    expect(Number(s), `Retry-After for this cause: ${range[0]}–${range[1]} s`).toBeLessThanOrEqual(range[1]);
  }
}

function checkErrorBody(error: unknown, code: string, type: OpenAiType): WireErrorBody {
  expect(error).toMatchObject({ message: expect.any(String), type, code });
  const e = error as WireErrorBody;
  expect(e.message.length).toBeGreaterThan(0);
  expect('param' in e && (e.param === null || typeof e.param === 'string'), 'error.param: null or a string').toBe(true);
  return e;
}

/** The `error` of the last `data:` frame of an SSE stream. */
function errorFrame(text: string): unknown {
  const frames = text.split('\n').filter((l) => l.startsWith('data: {'));
  const last = frames[frames.length - 1];
  expect(last, `an error frame in:\n${text}`).toBeDefined();
  return (JSON.parse(last!.slice('data: '.length)) as { error?: unknown }).error;
}

// --- the tests -------------------------------------------------------------------

/** The members of the WireCode union, read from its source (vitest does not typecheck, so `satisfies` alone would not fail a run). */
function wireCodesInSource(): string[] {
  const src = readFileSync(new URL('../../../src-main/core/proxy/errors.ts', import.meta.url), 'utf8');
  const union = /export type WireCode\s*=([^;]+);/.exec(src);
  if (!union) throw new Error('no `export type WireCode = …;` in src-main/core/proxy/errors.ts');
  return [...union[1]!.matchAll(/'([a-z_]+)'/g)].map((m) => m[1]!);
}

type Entry = [WireCode, Row];
const ROWS = Object.entries(TABLE) as Entry[];

describe('every wire code the proxy emits', () => {
  it('has exactly one row per member of WireCode', () => {
    expect(ROWS.map(([code]) => code).sort()).toEqual(wireCodesInSource().sort());
  });

  for (const [code, row] of ROWS) {
    if (row.wire === 'never') {
      if (row.check) it(`${code}: never sent (${row.reason})`, row.check);
      continue;
    }
    for (const c of row.cases) {
      it(`${code} → ${row.status}: ${c.name}`, async () => {
        const a = await c.run();
        if (row.wire === 'sse-frame') {
          expect(a.status, 'the stream had begun').toBe(200);
          expect(a.headers['content-type']).toContain('text/event-stream');
          checkErrorBody(errorFrame(a.text), code, row.type);
          return;
        }
        expect(a.status, a.text).toBe(row.status);
        expect(a.headers['content-type']).toContain('application/json');
        const error = checkErrorBody((JSON.parse(a.text) as { error?: unknown }).error, code, row.type);
        checkRetryAfter(row.status, a.headers, c.retryAfterS);
        if (c.actionRequired) {
          expect(a.headers['x-action-required']).toBe('true');
          expect(error['action_required']).toBe(true);
        } else {
          expect(a.headers['x-action-required']).toBeUndefined();
          expect(error['action_required']).toBeUndefined();
        }
        c.also?.(a, error);
      });
    }
  }
});

// The upstream's own refusals are relayed with its body; a client must still learn when to retry.
const RELAYED: ReadonlyArray<{ name: string; status: number; retryAfter?: string; retryAfterS?: readonly [number, number] }> = [
  { name: 'an upstream 429 without Retry-After gets one', status: 429 },
  { name: 'an upstream 503 without Retry-After gets one', status: 503 },
  { name: 'an upstream 502 without Retry-After gets one', status: 502 },
  { name: 'an upstream 504 without Retry-After gets one', status: 504 },
  { name: 'an upstream 429 with a bogus Retry-After ("soon") gets a valid one', status: 429, retryAfter: 'soon' },
  { name: 'an upstream 429 with Retry-After: 2 keeps it (and gets retry-after-ms)', status: 429, retryAfter: '2', retryAfterS: [2, 2] },
  { name: 'an upstream 503 with Retry-After as an HTTP-date 3 s ahead gets seconds', status: 503, retryAfter: 'date+3s', retryAfterS: [1, 4] },
];

describe('upstream refusals relayed by the proxy', () => {
  for (const r of RELAYED) {
    it(`${r.status}: ${r.name}`, async () => {
      const e = await env({
        handler: (_req, res) => {
          const headers: Record<string, string> = { 'content-type': 'application/json' };
          if (r.retryAfter === 'date+3s') headers['retry-after'] = new Date(Date.now() + 3_000).toUTCString();
          else if (r.retryAfter !== undefined) headers['retry-after'] = r.retryAfter;
          res.writeHead(r.status, headers);
          res.end(JSON.stringify({ error: { message: `the engine says ${r.status}`, type: 'server_error', param: null, code: null } }));
        },
      });
      const a = await send(e);
      expect(a.status).toBe(r.status);
      expect((JSON.parse(a.text) as { error: { message: string } }).error.message).toBe(`the engine says ${r.status}`);
      checkRetryAfter(r.status, a.headers, r.retryAfterS);
    });
  }
});
