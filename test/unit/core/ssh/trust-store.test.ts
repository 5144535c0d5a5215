import { describe, expect, it } from 'vitest';
import { KeyValueTrustStore, MemoryPassphraseCache, MemoryTrustStore, parseJumpHost } from '../../../../src-main/core/ssh/index.js';

const fp = (c: string) => `SHA256:${c.repeat(43)}`;

describe('trust stores', () => {
  for (const [name, make] of [
    ['memory', () => new MemoryTrustStore()],
    [
      'key-value (settings)',
      () => {
        const map = new Map<string, unknown>();
        return new KeyValueTrustStore({ get: <T>(k: string) => map.get(k) as T | undefined, set: (k, v) => void map.set(k, JSON.parse(JSON.stringify(v))) });
      },
    ],
  ] as const) {
    it(`${name}: adds, looks up case-insensitively by endpoint, de-duplicates, forgets`, () => {
      const s = make();
      s.add({ endpoint: 'GPU1', keyType: 'ssh-ed25519', fingerprint: fp('a'), confirmedAt: 1, actor: 'operator:x@test' });
      s.add({ endpoint: 'gpu1', keyType: 'ssh-ed25519', fingerprint: fp('a'), confirmedAt: 2, actor: 'operator:x@test' });
      s.add({ endpoint: '[gpu1]:2222', keyType: 'ssh-rsa', fingerprint: fp('b'), confirmedAt: 3, actor: 'operator:x@test' });
      expect(s.lookup('gpu1').map((e) => e.fingerprint)).toEqual([fp('a')]);
      expect(s.lookup('[GPU1]:2222')).toHaveLength(1);
      expect(s.forget('gpu1')).toBe(true);
      expect(s.lookup('gpu1')).toEqual([]);
      expect(s.forget('gpu1')).toBe(false);
    });
  }

  it('passphrases stay in memory and never serialise', () => {
    const c = new MemoryPassphraseCache();
    c.set('/k', 'hunter2');
    expect(c.get('/k')).toBe('hunter2');
    expect(JSON.stringify({ c })).not.toContain('hunter2');
    c.forget('/k');
    expect(c.get('/k')).toBeUndefined();
  });

  it('parses one jump hop; a chain needs the openssh transport', () => {
    expect(parseJumpHost('ops@bastion:2202')).toEqual({ user: 'ops', host: 'bastion', port: 2202 });
    expect(parseJumpHost('[2001:db8::1]')).toEqual({ user: null, host: '2001:db8::1', port: 22 });
    expect(() => parseJumpHost('a,b')).toThrow(expect.objectContaining({ code: 'SSH_NEEDS_OPENSSH', message: expect.stringMatching(/openssh transport/) }));
    expect(() => parseJumpHost('bad host')).toThrow(expect.objectContaining({ code: 'SSH_JUMP_FAILED' }));
  });
});
