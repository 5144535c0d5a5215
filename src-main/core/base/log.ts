// A small structured logger. Secrets never reach it: callers pass redacted
// fields, and `redact` masks values under key names that look secret.

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(scope: string): Logger;
}

// A key names a secret when it mentions one (password, api_key, privateKey…)
// or ends in "token" (token, accessToken, refresh_token) — but counts such as
// promptTokens or completion_tokens are figures, not secrets.
const SECRET_KEY = /pass(word|phrase)|secret|api[-_]?key|private[-_]?key|authorization|credential|cookie|token$/i;
const MAX_DEPTH = 8;
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key);
}

export function redact(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object') return value;
  // Deeper than any payload we write: refuse to pass it through unread.
  if (depth >= MAX_DEPTH) return '[truncated]';
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    out[k] = SECRET_KEY.test(k) ? '[redacted]' : redact(v, depth + 1);
  }
  return out;
}

export function createLogger(options: { level?: LogLevel; scope?: string; write?: (line: string) => void } = {}): Logger {
  const min = ORDER[options.level ?? 'info'];
  const write = options.write ?? ((line: string) => process.stderr.write(line + '\n'));
  const make = (scope: string | undefined): Logger => {
    const emit = (level: LogLevel, msg: string, fields?: Record<string, unknown>) => {
      if (ORDER[level] < min) return;
      const payload = fields ? ' ' + JSON.stringify(redact(fields)) : '';
      write(`${new Date().toISOString()} ${level.padEnd(5)} ${scope ? `[${scope}] ` : ''}${msg}${payload}`);
    };
    return {
      debug: (m, f) => emit('debug', m, f),
      info: (m, f) => emit('info', m, f),
      warn: (m, f) => emit('warn', m, f),
      error: (m, f) => emit('error', m, f),
      child: (s) => make(scope ? `${scope}/${s}` : s),
    };
  };
  return make(options.scope);
}

/** A logger that drops everything: for tests that do not look at logs. */
export const silentLogger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  child: () => silentLogger,
};
