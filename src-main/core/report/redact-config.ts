// Service config as it may appear in an evidence report: fields that look
// secret, and secrets written inline in commands or URLs, become "[redacted]".
import { isSecretKey, scrubSecretText } from '../base/index.js';

// ── redaction ─────────────────────────────────────────────────────────────

const SECRET_FIELD = /key|token|secret|passphrase|password/i;
// Secrets written inline in a command (restartCommand): base's one list (`--api-key X`, `HF_TOKEN=X`, URL credentials).
const scrubText = scrubSecretText;

/** A copy of a service's config with secret-looking fields, and secrets written inline in commands, replaced by "[redacted]". */
export function redactServiceConfig(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return scrubText(value);
  if (value === null || typeof value !== 'object') return value;
  if (depth >= 8) return '[truncated]';
  if (Array.isArray(value)) return value.map((v) => redactServiceConfig(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    out[k] = SECRET_FIELD.test(k) || isSecretKey(k) ? '[redacted]' : redactServiceConfig(v, depth + 1);
  }
  return out;
}

/** Replaces every occurrence of the given secrets in every string of a JSON-like value. */
export function scrubSecrets<T>(value: T, secrets: readonly string[]): T {
  const live = secrets.filter((s) => s.length >= 4);
  if (live.length === 0) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return live.reduce((s, secret) => s.split(secret).join('[redacted]'), v);
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return walk(value) as T;
}
