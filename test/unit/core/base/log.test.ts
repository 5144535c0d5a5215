import { describe, expect, it } from 'vitest';
import { createLogger, redact } from '../../../../src-main/core/base/index.js';

describe('redact', () => {
  it('masks values under secret-looking keys at any depth we write', () => {
    const out = redact({
      password: 'p',
      passphrase: 'pp',
      apiKey: 'k',
      api_key: 'k2',
      privateKey: 'pk',
      token: 't',
      accessToken: 'at',
      refresh_token: 'rt',
      Authorization: 'Bearer x',
      nested: { deeper: [{ clientSecret: 's' }] },
    }) as Record<string, unknown>;
    expect(JSON.stringify(out)).not.toMatch(/"(p|pp|k|k2|pk|t|at|rt|s|Bearer x)"/);
    expect(out.password).toBe('[redacted]');
  });

  it('keeps token counts and other figures', () => {
    const fields = { promptTokens: 12, completion_tokens: 40, maxTokens: 256, passes: 3, tokensPerS: 17.5 };
    expect(redact(fields)).toEqual(fields);
  });

  it('does not pass through structures deeper than it reads', () => {
    let deep: Record<string, unknown> = { password: 'hidden' };
    for (let i = 0; i < 12; i++) deep = { next: deep };
    expect(JSON.stringify(redact(deep))).not.toContain('hidden');
  });

  it('the logger writes redacted fields', () => {
    const lines: string[] = [];
    const log = createLogger({ level: 'debug', write: (l) => lines.push(l) });
    log.info('connecting', { host: 'l20-poc', passphrase: 'hunter2' });
    expect(lines[0]).toContain('l20-poc');
    expect(lines[0]).not.toContain('hunter2');
  });
});
