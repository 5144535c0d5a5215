import { describe, expect, it } from 'vitest';
import { OnPremErrorCode, OffPremCounter, createOffPremCounter, describeUrlTarget, isOnPremUrl, offPremError } from '../../../../src-main/core/base/index.js';
import { isLoopbackUrl } from '../../../../src-main/core/config/schema.js';

const ON = [
  'http://127.0.0.1:8000/v1/models',
  'http://127.1.2.3/',
  'http://127.255.255.255:1',
  'https://localhost:9000/admin',
  'http://LOCALHOST/',
  'http://[::1]:8000/',
  'http://[0:0:0:0:0:0:0:1]/',
  'http://127.1/', // the URL parser reads it as 127.0.0.1
  'http://0x7f.0.0.1/',
  'http://user:pass@127.0.0.1/', // user info is not the host
  'http://example.com@127.0.0.1:8000/',
];

const OFF = [
  'http://10.0.0.1:8000/',
  'http://192.168.1.5/',
  'http://example.com/',
  'https://api.openai.com/v1',
  'http://127.0.0.1.example.com/',
  'http://127.0.0.1@example.com/',
  'http://localhost.example.com/',
  'http://0.0.0.0:8000/',
  'http://[::]/',
  'http://[::2]/',
  'http://128.0.0.1/',
  'http://[::ffff:127.0.0.1]/', // IPv4-mapped: refused, as the config check refuses it
];

const BAD = ['', 'not a url', '127.0.0.1:8000', 'localhost:8000', '//127.0.0.1/', 'http://', 'http://[::1/', 'file:///etc/passwd'];

describe('isOnPremUrl', () => {
  it.each(ON)('%s is on this machine', (url) => {
    expect(isOnPremUrl(url)).toBe(true);
    expect(isOnPremUrl(new URL(url))).toBe(true);
  });

  it.each(OFF)('%s is not', (url) => {
    expect(isOnPremUrl(url)).toBe(false);
  });

  it.each(BAD)('%j (not a usable URL) is not', (url) => {
    expect(isOnPremUrl(url)).toBe(false);
  });

  it('agrees with the config check of lifecycle.routerBaseUrl on every sample', () => {
    for (const url of [...ON, ...OFF, ...BAD]) expect(isOnPremUrl(url), url).toBe(isLoopbackUrl(url));
  });
});

describe('OffPremCounter', () => {
  it('allows on-prem URLs without counting and counts refusals per purpose', () => {
    const counter = createOffPremCounter();
    expect(counter.counts()).toEqual({ proxy: 0, lifecycle: 0, probe: 0 });
    expect(counter.check('http://127.0.0.1:41000/v1/chat/completions', 'proxy')).toBe(true);
    expect(counter.check('http://[::1]:9000/admin', 'lifecycle')).toBe(true);
    expect(counter.counts()).toEqual({ proxy: 0, lifecycle: 0, probe: 0 });
    expect(counter.check('http://10.0.0.1:8000/v1/chat/completions', 'proxy')).toBe(false);
    expect(counter.check('https://example.com/', 'proxy')).toBe(false);
    expect(counter.check('not a url', 'probe')).toBe(false);
    expect(counter.counts()).toEqual({ proxy: 2, lifecycle: 0, probe: 1 });
  });

  it('hands out copies, and each counter counts alone', () => {
    const a = createOffPremCounter();
    const b = createOffPremCounter();
    const seen = a.counts();
    a.check('http://10.0.0.1/', 'lifecycle');
    expect(seen.lifecycle).toBe(0);
    expect(a.counts().lifecycle).toBe(1);
    expect(b.counts()).toEqual({ proxy: 0, lifecycle: 0, probe: 0 });
  });
});

describe("the console's own tunnels", () => {
  it('have no URL to pass the guard by: no name, `.invalid` or other, counts as on this machine', () => {
    // A tunnel's private end is reached only through its UpstreamClient, bound to the socket.
    expect(isOnPremUrl('http://000000000000000000000000.tunnel.gpu-console.invalid/')).toBe(false);
    expect(isOnPremUrl('http://tunnel.gpu-console.invalid/')).toBe(false);
    const counter = new OffPremCounter();
    expect(counter.check('http://0123456789abcdef01234567.tunnel.gpu-console.invalid/sleep', 'lifecycle')).toBe(false);
    expect(counter.counts()).toEqual({ proxy: 0, lifecycle: 1, probe: 0 });
  });
});


describe('offPremError', () => {
  it('names the purpose and the target, never the user info, path or query', () => {
    const e = offPremError('http://alice:s3cret@10.0.0.1:8000/v1/models?key=abc', 'probe');
    expect(e.code).toBe(OnPremErrorCode.REFUSED);
    expect(e.retryable).toBe(false);
    expect(e.message).toContain('probe call to http://10.0.0.1:8000');
    expect(JSON.stringify(e.toJSON())).not.toMatch(/alice|s3cret|key=abc|v1\/models/);
    expect(describeUrlTarget('nope')).toBe('an unparsable URL');
  });
});
