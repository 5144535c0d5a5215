import { describe, expect, it } from 'vitest';
import { extractTokenFromHash, resolveToken, stripTokenFromHash, TOKEN_STORAGE_KEY, type KeyValueStorage } from '../../../src-renderer/src/transport/token.js';

const HEX = '9f2c4e1ab37d5e60c1f8a2b49d0e7c35';

function memoryStorage(initial: Record<string, string> = {}): KeyValueStorage & { data: Record<string, string> } {
  const data = { ...initial };
  return {
    data,
    getItem: (key: string) => data[key] ?? null,
    setItem: (key: string, value: string) => {
      data[key] = value;
    },
  };
}

describe('extractTokenFromHash', () => {
  it('reads #token=<hex>', () => {
    expect(extractTokenFromHash(`#token=${HEX}`)).toBe(HEX);
    expect(extractTokenFromHash(`token=${HEX}`)).toBe(HEX);
  });

  it('reads the token among other fragment parameters', () => {
    expect(extractTokenFromHash(`#view=audit&token=${HEX}&x=1`)).toBe(HEX);
  });

  it('rejects absent, empty or malformed tokens', () => {
    expect(extractTokenFromHash('')).toBeNull();
    expect(extractTokenFromHash('#')).toBeNull();
    expect(extractTokenFromHash('#token=')).toBeNull();
    expect(extractTokenFromHash('#token=abc')).toBeNull(); // too short to be a real token
    expect(extractTokenFromHash('#token=%0d%0aX-Evil:%201aaaaaaaaaaaa')).toBeNull(); // no header injection
    expect(extractTokenFromHash('#tokens=9f2c4e1ab37d5e60')).toBeNull();
  });
});

describe('stripTokenFromHash', () => {
  it('removes only the token', () => {
    expect(stripTokenFromHash(`#token=${HEX}`)).toBe('');
    expect(stripTokenFromHash(`#view=audit&token=${HEX}`)).toBe('#view=audit');
  });
});

describe('resolveToken', () => {
  it('takes the fragment token, stores it for reloads and removes it from the URL', () => {
    const storage = memoryStorage();
    const replaced: string[] = [];
    const token = resolveToken({ hash: `#token=${HEX}`, storage, replaceHash: (h) => replaced.push(h) });
    expect(token).toBe(HEX);
    expect(storage.data[TOKEN_STORAGE_KEY]).toBe(HEX);
    expect(replaced).toEqual(['']);
  });

  it('falls back to the stored token after a reload (no fragment)', () => {
    const storage = memoryStorage({ [TOKEN_STORAGE_KEY]: HEX });
    const replaced: string[] = [];
    expect(resolveToken({ hash: '', storage, replaceHash: (h) => replaced.push(h) })).toBe(HEX);
    expect(replaced).toEqual([]);
  });

  it('prefers a fresh fragment token over a stale stored one', () => {
    const storage = memoryStorage({ [TOKEN_STORAGE_KEY]: 'a'.repeat(32) });
    expect(resolveToken({ hash: `#token=${HEX}`, storage, replaceHash: () => undefined })).toBe(HEX);
    expect(storage.data[TOKEN_STORAGE_KEY]).toBe(HEX);
  });

  it('returns null with neither, and still works when storage throws', () => {
    expect(resolveToken({ hash: '', storage: memoryStorage(), replaceHash: () => undefined })).toBeNull();
    const throwing = {
      getItem: () => {
        throw new Error('denied');
      },
      setItem: () => {
        throw new Error('denied');
      },
    };
    expect(resolveToken({ hash: `#token=${HEX}`, storage: throwing, replaceHash: () => undefined })).toBe(HEX);
    expect(resolveToken({ hash: '', storage: throwing, replaceHash: () => undefined })).toBeNull();
    expect(resolveToken({ hash: `#token=${HEX}`, storage: null, replaceHash: () => undefined })).toBe(HEX);
  });
});
