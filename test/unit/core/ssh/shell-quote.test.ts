import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { shellJoin, shellQuote } from '../../../../src-main/core/ssh/index.js';

/** What /bin/sh actually receives as argv[1] after parsing `printf %s <quoted>`. */
const roundTrip = (arg: string): string => execFileSync('/bin/sh', ['-c', `printf %s ${shellQuote(arg)}`]).toString('utf8');

describe('shellQuote', () => {
  it('leaves plain words alone and quotes the rest', () => {
    expect(shellQuote('vllm-qwen.service')).toBe('vllm-qwen.service');
    expect(shellQuote('/opt/models/Qwen3:27B')).toBe('/opt/models/Qwen3:27B');
    expect(shellQuote('')).toBe("''");
    expect(shellQuote('two words')).toBe("'two words'");
    expect(shellQuote("it's")).toBe("'it'\\''s'");
  });

  it.each([
    '$(touch /tmp/pwned)',
    '`id`',
    'a; rm -rf /',
    "'; echo injected; '",
    'x && y || z',
    '$HOME ${PATH}',
    '*.gguf ?',
    'line1\nline2',
    "\\'\"",
    '-n',
  ])('survives a shell round trip unchanged: %j', (arg) => {
    expect(roundTrip(arg)).toBe(arg);
  });

  it('refuses NUL bytes', () => {
    expect(() => shellQuote('a\0b')).toThrow(TypeError);
  });

  it('joins several arguments', () => {
    expect(shellJoin(['systemctl', 'restart', 'vllm a'])).toBe("systemctl restart 'vllm a'");
  });
});
