// The web bridge's per-start token: it arrives once in the URL fragment
// (`#token=<hex>`), is kept in sessionStorage so a reload still works, and is
// removed from the visible URL so it does not linger in screenshots or history.

export const TOKEN_STORAGE_KEY = 'gpu-console.token';
export const TOKEN_HEADER = 'x-gpu-console-token';

const TOKEN_PATTERN = /^[A-Za-z0-9_-]{8,512}$/;

/** The token in a location hash such as `#token=ab12` or `#view=fleet&token=ab12`; null when absent or malformed. */
export function extractTokenFromHash(hash: string): string | null {
  const body = hash.startsWith('#') ? hash.slice(1) : hash;
  if (body === '') return null;
  const params = new URLSearchParams(body);
  const token = params.get('token');
  return token !== null && TOKEN_PATTERN.test(token) ? token : null;
}

/** The hash with the token parameter removed ('' when nothing else was there). */
export function stripTokenFromHash(hash: string): string {
  const body = hash.startsWith('#') ? hash.slice(1) : hash;
  const params = new URLSearchParams(body);
  params.delete('token');
  const rest = params.toString();
  return rest === '' ? '' : `#${rest}`;
}

/** The part of sessionStorage we use (kept structural so Node tests can fake it). */
export interface KeyValueStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

export interface TokenEnvironment {
  readonly hash: string;
  readonly storage: KeyValueStorage | null;
  /** Replaces the visible URL's fragment (history.replaceState in the browser). */
  replaceHash(nextHash: string): void;
}

/** Fragment first (a fresh `serve` URL wins over a stale stored token), then storage. */
export function resolveToken(env: TokenEnvironment): string | null {
  const fromHash = extractTokenFromHash(env.hash);
  if (fromHash !== null) {
    try {
      env.storage?.setItem(TOKEN_STORAGE_KEY, fromHash);
    } catch {
      // storage disabled: the token still works for this page load
    }
    env.replaceHash(stripTokenFromHash(env.hash));
    return fromHash;
  }
  if (/(^#|&)token=/.test(env.hash)) env.replaceHash(stripTokenFromHash(env.hash));
  let stored: string | null = null;
  try {
    stored = env.storage?.getItem(TOKEN_STORAGE_KEY) ?? null;
  } catch {
    stored = null;
  }
  return stored !== null && TOKEN_PATTERN.test(stored) ? stored : null;
}
