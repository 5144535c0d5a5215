import { describe, expect, it } from 'vitest';
import { checkTunnelRequest } from '../../../../src-main/core/ssh/tunnel-paths.js';

// Issue #32 item 3: a tunnel's public port passes what apps call on SGLang and TEI servers, and
// still refuses their admin routes (and SGLang's /get_server_info, which answers --api-key).

const verdict = (method: string, path: string) => {
  const v = checkTunnelRequest(method, path);
  return v.ok ? 'pass' : v.code;
};

describe('tunnel paths for SGLang and TEI', () => {
  it("passes TEI's inference and info routes and SGLang's generation and model facts", () => {
    for (const [m, p] of [
      ['GET', '/info'],
      ['POST', '/embed'],
      ['POST', '/embed_all'],
      ['POST', '/embed_sparse'],
      ['POST', '/predict'],
      ['POST', '/similarity'],
      ['POST', '/decode'],
      ['POST', '/rerank'],
      ['POST', '/generate'],
      ['GET', '/get_model_info'],
      ['GET', '/health_generate'],
    ] as const) {
      expect(verdict(m, p), `${m} ${p}`).toBe('pass');
    }
  });

  it("refuses SGLang's admin routes, its server arguments, and writes to the read-only ones", () => {
    for (const [m, p] of [
      ['GET', '/get_server_info'],
      ['POST', '/flush_cache'],
      ['POST', '/update_weights_from_disk'],
      ['POST', '/release_memory_occupation'],
      ['POST', '/start_profile'],
      ['POST', '/info'],
      ['GET', '/embed'],
    ] as const) {
      expect(verdict(m, p), `${m} ${p}`).not.toBe('pass');
    }
  });
});
