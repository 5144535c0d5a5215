import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalPath, checkTunnelHost, checkTunnelRequest, isAllowedPath } from '../../../../src-main/core/ssh/index.js';

// What a tunnel's public port passes: the OpenAI-compatible API, inference and
// read-only paths; never an engine's admin path, however it is spelled.

const refusedCode = (method: string, target: string) => {
  const v = checkTunnelRequest(method, target);
  return v.ok ? 'passed' : v.code;
};
const forwarded = (method: string, target: string) => {
  const v = checkTunnelRequest(method, target);
  return v.ok ? v.target : null;
};

describe('tunnel allow list', () => {
  it.each([
    ['POST', '/v1/chat/completions'],
    ['POST', '/v1/completions'],
    ['POST', '/v1/embeddings'],
    ['GET', '/v1/models'],
    ['POST', '/v1/responses'],
    ['POST', '/v1/audio/transcriptions'],
    ['GET', '/v1/health'],
    ['DELETE', '/v1/stream'],
    ['GET', '/health'],
    ['HEAD', '/health'],
    ['GET', '/ping'],
    ['POST', '/ping'],
    ['GET', '/version'],
    ['GET', '/metrics'],
    ['GET', '/metrics?model=qwen'],
    ['GET', '/props'],
    ['GET', '/slots?fail_on_no_slot=1'],
    ['GET', '/models'],
    ['GET', '/is_sleeping'],
    ['POST', '/tokenize'],
    ['POST', '/detokenize'],
    ['POST', '/completion'],
    ['POST', '/infill'],
    ['POST', '/embedding'],
    ['POST', '/rerank'],
    ['POST', '/v2/rerank'],
    ['POST', '/apply-template'],
    ['POST', '/score'],
    ['POST', '/pooling'],
    ['POST', '/classify'],
    ['OPTIONS', '/health'],
    ['GET', '/'],
  ])('%s %s passes', (method, target) => {
    expect(refusedCode(method, target)).toBe('passed');
  });

  it.each([
    // vLLM: sleep mode and dev mode (VLLM_SERVER_DEV_MODE=1), profiling, LoRA, pause, scaling.
    ['POST', '/sleep?level=1'],
    ['POST', '/sleep?level=2&mode=abort'],
    ['POST', '/wake_up'],
    ['POST', '/wake_up?tags=weights'],
    ['POST', '/collective_rpc'],
    ['POST', '/reset_prefix_cache'],
    ['POST', '/reset_mm_cache'],
    ['POST', '/reset_encoder_cache'],
    ['POST', '/start_profile'],
    ['POST', '/stop_profile'],
    ['GET', '/server_info'],
    ['POST', '/pause'],
    ['POST', '/resume'],
    ['POST', '/abort_requests'],
    ['POST', '/scale_elastic_ep'],
    ['POST', '/update_weights'],
    ['POST', '/v1/load_lora_adapter'],
    ['POST', '/v1/unload_lora_adapter'],
    ['POST', '/invocations'],
    // llama-server: settings, slots, LoRA, router, tools.
    ['POST', '/props'],
    ['POST', '/slots/0?action=save'],
    ['POST', '/slots/0?action=restore'],
    ['POST', '/slots/0?action=erase'],
    ['POST', '/lora-adapters'],
    ['POST', '/models'],
    ['POST', '/models/load'],
    ['POST', '/models/unload'],
    ['DELETE', '/models'],
    ['GET', '/cors-proxy?url=http://example.com'],
    ['POST', '/tools'],
    // A read path with a changing method.
    ['POST', '/health'],
    ['DELETE', '/metrics'],
  ])('%s %s is refused with TUNNEL_ADMIN_PATH_REFUSED', (method, target) => {
    const v = checkTunnelRequest(method, target);
    expect(v).toMatchObject({ ok: false, status: 403, code: 'TUNNEL_ADMIN_PATH_REFUSED' });
    if (!v.ok) expect(v.message).toMatch(/use the console's actions \(wake\/sleep\/restart\) so the change is approved and audited/);
  });

  it('names the method and the path it refused, without the query', () => {
    const v = checkTunnelRequest('POST', '/%73leep?level=1&secret=x');
    expect(v.ok).toBe(false);
    if (!v.ok) {
      expect(v.message).toMatch(/^POST \/sleep is not passed by the console's tunnel/);
      expect(v.message).not.toContain('secret');
    }
  });
});

describe('tunnel path normalisation', () => {
  it.each([
    '/%73leep',
    '/%2573leep',
    '//sleep',
    '/./sleep',
    '/v1/../sleep',
    '/v1/%2e%2e/sleep',
    '/v1%2F..%2Fsleep',
    '/v1/chat/../../sleep',
    '/health/../sleep',
    '/SLEEP',
    '/Sleep/',
    '/\\sleep',
    '/v1\\..\\sleep',
    '/../../sleep',
    '/V1/LOAD_LORA_ADAPTER',
    '/v1/load_lora_adapter/',
    '/slots/0/../0',
  ])('POST %s reads as an admin path and is refused', (target) => {
    expect(refusedCode('POST', target)).toBe('TUNNEL_ADMIN_PATH_REFUSED');
  });

  it('sends on the path it checked, not the one it was given', () => {
    expect(forwarded('GET', '//v1//models/')).toBe('/v1/models');
    expect(forwarded('GET', '/v1/./models')).toBe('/v1/models');
    expect(forwarded('GET', '/%76%31/models?x=%2F..%2Fsleep')).toBe('/v1/models?x=%2F..%2Fsleep');
    expect(forwarded('POST', '/v1/chat/completions?stream=true')).toBe('/v1/chat/completions?stream=true');
    // Exactly one decode on the server's side gives back what was checked.
    expect(forwarded('GET', '/v1/models/org%2520name')).toBe('/v1/models/org%20name');
    expect(forwarded('GET', '/v1/models/a:b@c')).toBe('/v1/models/a:b@c');
  });

  it.each([
    ['/%zz', 'bad escape'],
    ['/%E0%A4%A', 'truncated UTF-8'],
    ['/%FF', 'not UTF-8'],
    ['/%25252525', 'encoded four times'],
    ['/v1/models%00', 'NUL'],
    ['/v1/models%0d%0aX-Injected:%201', 'CR LF'],
    ['*', 'asterisk form'],
    ['v1/models', 'no leading slash'],
    ['http://example.com/v1/models', 'absolute form to another host'],
    ['http://10.0.0.5:8000/sleep', 'absolute form to another host'],
    ['https://127.0.0.1/v1/models', 'absolute https'],
    ['/v1/models#frag', 'fragment'],
  ])('%s (%s) is a refused request target (400)', (target) => {
    expect(checkTunnelRequest('GET', target)).toMatchObject({ ok: false, status: 400, code: 'TUNNEL_REQUEST_TARGET_REFUSED' });
  });

  it('absolute form to this machine is read as its path', () => {
    expect(forwarded('GET', 'http://127.0.0.1:8001/v1/models')).toBe('/v1/models');
    expect(forwarded('GET', 'http://localhost:8001/health')).toBe('/health');
    expect(refusedCode('POST', 'http://127.0.0.1:8001/sleep')).toBe('TUNNEL_ADMIN_PATH_REFUSED');
  });

  it('what is sent on reads back as the path that was checked (any input)', () => {
    const seg = fc.constantFrom('v1', 'models', 'sleep', '..', '.', '', '%2e%2e', '%2F', '%73leep', '%252e', 'a b', 'ü', '%', '?', 'chat', 'completions', '\\', ';', 'A%2fB');
    fc.assert(
      fc.property(fc.array(seg, { maxLength: 8 }), fc.constantFrom('GET', 'POST', 'DELETE'), (segs, method) => {
        const target = `/${segs.join('/')}`;
        const v = checkTunnelRequest(method, target);
        if (!v.ok) return;
        const sentPath = v.target.split('?')[0]!;
        const readBack = canonicalPath(sentPath);
        expect(readBack).not.toBeNull();
        expect(isAllowedPath(method, readBack!)).toBe(true);
        // A server decoding once sees the checked path.
        expect(decodeURIComponent(sentPath)).toBe(readBack);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('tunnel Host check (DNS rebinding)', () => {
  it.each(['127.0.0.1:8001', 'localhost:8001', 'LOCALHOST:8001', '[::1]:8001', '127.0.0.1', 'localhost', undefined, ''])('%s passes on port 8001', (host) => {
    expect(checkTunnelHost(host, 8001)).toBeNull();
  });
  it.each(['evil.example', 'evil.example:8001', '127.0.0.1:8002', '127.0.0.2:8001', '127.0.0.1.nip.io:8001', 'localhost.evil:8001', '0.0.0.0:8001', 'user@127.0.0.1:8001', '127.0.0.1:8001 x'])(
    '%s is refused with TUNNEL_HOST_REFUSED',
    (host) => {
      expect(checkTunnelHost(host, 8001)).toMatchObject({ ok: false, status: 403, code: 'TUNNEL_HOST_REFUSED' });
    },
  );
});
