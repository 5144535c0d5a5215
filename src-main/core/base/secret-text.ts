// Secrets written inline in free text — a command line, a service's log line —
// become "[redacted]". One list for every place that shows such text (the
// report's service config, the logs capability), so a pattern added for one
// protects the others.

// A name is secret when its LAST word is one (`--api-key`, `HF_TOKEN`, `--hf-token`): `--max-num-batched-tokens 8192`
// or `max_tokens=4096`, which fill every vLLM start-up log, are figures.
const SECRET_WORD = '(?:key|token|secret|passphrase|password|passwd)';
// `--api-key X`, `--token=X`, `-hf-token 'X'`.
const SECRET_FLAG = new RegExp(`(--?(?:[A-Za-z0-9]+[-_])*${SECRET_WORD})(=|\\s+)('[^']*'|"[^"]*"|[^\\s'"]+)`, 'gi');
// `HF_TOKEN=X`, `OPENAI_API_KEY="X"`.
const SECRET_ENV = new RegExp(`\\b((?:[A-Za-z0-9]+_)*${SECRET_WORD})=('[^']*'|"[^"]*"|[^\\s'"]+)`, 'gi');
// A quoted key in a repr or JSON: vLLM's `non-default args: {'api_key': ['sk-…']}`, `"hf_token": "…"`.
const SECRET_KV = new RegExp(`(['"])((?:[A-Za-z0-9]+[-_])*${SECRET_WORD})\\1(\\s*:\\s*\\[?\\s*)(['"])[^'"]*\\4`, 'gi');
// Credentials in a URL: `http://user:pass@host`.
const URL_USERINFO = /(\b[a-z][a-z0-9+.-]*:\/\/)[^\s/@]+@/gi;
// A logged HTTP header or its repr: `Authorization: Bearer X`, `'authorization': 'Basic X'`, `X-Api-Key: X`.
const AUTH_HEADER = /\b((?:proxy-)?authorization|x-api-key|api-key|cookie)(["']?\s*[:=]\s*["']?)(?:(bearer|basic|token)\s+)?([^\s"',;]+)/gi;
// A bearer token on its own: `Bearer sk-…`.
const BEARER = /\b(bearer)\s+([A-Za-z0-9._~+/=-]{4,})/gi;

/** `text` with secrets written inline replaced by "[redacted]" (flags, environment assignments, URL credentials, auth headers, bearer tokens). */
export function scrubSecretText(text: string): string {
  return text
    .replace(SECRET_FLAG, '$1$2[redacted]')
    .replace(SECRET_ENV, '$1=[redacted]')
    .replace(SECRET_KV, '$1$2$1$3$4[redacted]$4')
    .replace(URL_USERINFO, '$1[redacted]@')
    .replace(AUTH_HEADER, (_m, name: string, sep: string, scheme: string | undefined) => `${name}${sep}${scheme ? `${scheme} ` : ''}[redacted]`)
    .replace(BEARER, '$1 [redacted]');
}

/** `text` with each of `secrets` (known values: a service's API key) replaced; values under 4 characters are not secrets worth the damage. */
export function scrubKnownSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s.length >= 4 && out.includes(s)) out = out.split(s).join('[redacted]');
  return out;
}
