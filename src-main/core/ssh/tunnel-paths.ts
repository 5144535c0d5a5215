// Which requests a tunnel's public port passes to the model server: the
// OpenAI-compatible API, inference and read-only paths. Everything else is
// refused, above all the engines' admin paths (vLLM's /sleep, /wake_up,
// /collective_rpc, /reset_prefix_cache, profiling, LoRA loading, pause;
// llama-server's slot save/restore/erase, POST /props, router load/unload),
// which change the server without a proposal or an audit row: the console's own
// drivers reach them through the tunnel's private socket, after an approval.
//
// An allow list, because the engines keep adding admin routes (vLLM's dev mode
// grew a dozen routers). Sources: vllm/entrypoints/openai/api_server.py and
// vllm/entrypoints/serve/** (routers attached without and with
// VLLM_SERVER_DEV_MODE), llama.cpp tools/server/server.cpp (route table, router
// mode), sglang/srt/entrypoints/http_server.py, text-embeddings-inference
// router/src/http/server.rs, and the reference wire formats (§2-§4).
//
// The decision is made on the path as a server could read it at its most
// generous: percent-decoded until stable, `\` read as `/`, empty and `.`
// segments dropped, `..` resolved, compared without case. That path, encoded
// again, is what goes on to the server, so what was checked is what it gets:
// `/%73leep`, `//sleep`, `/v1/../sleep` are /sleep.

import { TunnelPathErrorCode } from './errors.js';

const READ = ['GET', 'HEAD', 'OPTIONS'] as const;
const INFER = ['POST', 'OPTIONS'] as const;

/** What passes, besides anything under /v1/ (see V1_ADMIN). Paths in lower case. */
export const TUNNEL_ALLOWED: readonly { path: string; methods: readonly string[] }[] = [
  // llama-server's web UI page (vLLM answers 404).
  { path: '/', methods: READ },
  // Health, version, metrics, state (vLLM, llama-server).
  { path: '/health', methods: READ },
  { path: '/ping', methods: [...READ, 'POST'] },
  { path: '/version', methods: READ },
  { path: '/metrics', methods: READ },
  { path: '/load', methods: READ },
  { path: '/is_sleeping', methods: READ },
  // llama-server: GET only (POST /props changes settings, POST /slots/<id> saves, restores, erases).
  { path: '/props', methods: READ },
  { path: '/slots', methods: READ },
  { path: '/lora-adapters', methods: READ },
  // llama-server's router: the model list (POST /models, /models/load, /models/unload change it).
  { path: '/models', methods: READ },
  // TEI's model facts; SGLang's model facts and its 1-token health generation (not /get_server_info:
  // it answers the server's arguments, --api-key included).
  { path: '/info', methods: READ },
  { path: '/get_model_info', methods: READ },
  { path: '/health_generate', methods: READ },
  // Inference outside /v1/ (llama-server's own and legacy names, vLLM's pooling and scoring).
  ...[
    '/completion',
    '/completions',
    '/chat/completions',
    '/chat/completions/input_tokens',
    '/responses',
    '/responses/input_tokens',
    '/audio/transcriptions',
    '/infill',
    '/embedding',
    '/embeddings',
    '/rerank',
    '/reranking',
    '/v2/rerank',
    '/tokenize',
    '/detokenize',
    '/apply-template',
    '/score',
    '/pooling',
    '/classify',
    // TEI's native inference routes; SGLang's native generation.
    '/embed',
    '/embed_all',
    '/embed_sparse',
    '/predict',
    '/similarity',
    '/decode',
    '/generate',
  ].map((path) => ({ path, methods: INFER })),
];

/** Under /v1/, what changes the server all the same: vLLM's runtime LoRA loading (VLLM_ALLOW_RUNTIME_LORA_UPDATING). */
export const V1_ADMIN: readonly string[] = ['/v1/load_lora_adapter', '/v1/unload_lora_adapter'];

export type TunnelVerdict =
  | { ok: true; /** Path (and query) to send on: the checked path, encoded again. */ target: string }
  | { ok: false; status: 400 | 403; code: TunnelPathErrorCode; message: string };

const MAX_DECODE_ROUNDS = 3;

/**
 * The decoded, resolved path ('/a/b'), or null when it cannot be read: a bad %-escape, still
 * encoded after three rounds, or a control character.
 */
export function canonicalPath(rawPath: string): string | null {
  let decoded = rawPath;
  for (let round = 0; ; round++) {
    let next: string;
    try {
      next = decodeURIComponent(decoded);
    } catch {
      return null;
    }
    if (next === decoded) break;
    if (round === MAX_DECODE_ROUNDS) return null;
    decoded = next;
  }
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(decoded)) return null;
  const out: string[] = [];
  for (const seg of decoded.replace(/\\/g, '/').split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') out.pop();
    else out.push(seg);
  }
  return `/${out.join('/')}`;
}

/** A decoded path written back as a request target: every byte outside RFC 3986 pchar is %-encoded. */
export function encodePath(path: string): string {
  return path
    .split('/')
    .map((seg) => encodeURIComponent(seg).replace(/%(2[146789ABC]|3[ABD]|40)/gi, (m) => decodeURIComponent(m)))
    .join('/');
}

export function isAllowedPath(method: string, path: string): boolean {
  const p = path.toLowerCase();
  if (p.startsWith('/v1/')) return !V1_ADMIN.some((a) => p === a || p.startsWith(`${a}/`));
  const rule = TUNNEL_ALLOWED.find((r) => r.path === p);
  return rule !== undefined && rule.methods.includes(method.toUpperCase());
}

const LOOPBACK_HOST = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|localhost|\[::1\])$/i;

function refuseTarget(message: string): TunnelVerdict {
  return { ok: false, status: 400, code: TunnelPathErrorCode.TARGET_REFUSED, message };
}

const LOOPBACK_NAMES = new Set(['127.0.0.1', 'localhost', '[::1]']);

/**
 * DNS-rebinding defence, the proxy's rule: the Host names loopback and, when it carries a port, the
 * gate's own, so a web page whose name was rebound to 127.0.0.1 cannot drive a model through the
 * tunnel. An absent Host (HTTP/1.0) passes; Node refuses an HTTP/1.1 request without one.
 */
export function checkTunnelHost(host: string | undefined, port: number): TunnelVerdict | null {
  if (host === undefined || host === '') return null;
  const m = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::(\d{1,5}))?$/.exec(host.toLowerCase());
  if (m && LOOPBACK_NAMES.has(m[1]!) && (m[2] === undefined || Number(m[2]) === port)) return null;
  return {
    ok: false,
    status: 403,
    code: TunnelPathErrorCode.HOST_REFUSED,
    message: `the tunnel answers only requests addressed to 127.0.0.1:${port} or localhost:${port}`,
  };
}

/** The gate's decision on one request line. */
export function checkTunnelRequest(method: string, target: string): TunnelVerdict {
  let raw = target;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(raw)) {
    // Absolute form (what a client sends to a forward proxy): only to this machine, else it is a proxy request.
    let u: URL;
    try {
      u = new URL(raw);
    } catch {
      return refuseTarget('the request target is not a valid URL');
    }
    if (u.protocol !== 'http:' || !LOOPBACK_HOST.test(u.host.replace(/:\d+$/, ''))) {
      return refuseTarget(`the tunnel is not a proxy: a request for ${u.protocol}//${u.host} is refused`);
    }
    raw = `${u.pathname}${u.search}`;
  }
  if (!raw.startsWith('/')) return refuseTarget('the request target must be a path starting with /');
  const q = raw.indexOf('?');
  const rawPath = q < 0 ? raw : raw.slice(0, q);
  const query = q < 0 ? '' : raw.slice(q);
  if (rawPath.includes('#')) return refuseTarget('the request target holds a fragment (#)');
  const path = canonicalPath(rawPath);
  if (path === null) return refuseTarget('the request path has a malformed %-escape, is encoded more than three times, or holds a control character');
  if (!isAllowedPath(method, path)) {
    return {
      ok: false,
      status: 403,
      code: TunnelPathErrorCode.ADMIN_PATH_REFUSED,
      message:
        `${method.toUpperCase()} ${path} is not passed by the console's tunnel: only the OpenAI-compatible API, inference and read-only paths are. ` +
        `Engine admin paths change the model server; use the console's actions (wake/sleep/restart) so the change is approved and audited`,
    };
  }
  return { ok: true, target: `${encodePath(path)}${query}` };
}
