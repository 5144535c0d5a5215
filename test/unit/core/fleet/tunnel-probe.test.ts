import { MockAgent } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock, OnPremErrorCode, createOffPremCounter } from '../../../../src-main/core/base/index.js';
import { probeTunnel, testTunnel } from '../../../../src-main/core/fleet/index.js';

// The probe and the operator's Test ask the on-prem guard before they connect.

let agent: MockAgent;
afterEach(async () => {
  await agent?.close();
});

function mock(): MockAgent {
  agent = new MockAgent();
  agent.disableNetConnect();
  return agent;
}

describe('tunnel probe and the on-prem guard', () => {
  it('probes a tunnel URL on loopback as before, counting nothing', async () => {
    const dispatcher = mock();
    dispatcher.get('http://127.0.0.1:41000').intercept({ path: '/v1/models', method: 'GET' }).reply(200, { data: [{ id: 'qwen' }] });
    const offPrem = createOffPremCounter();
    const r = await probeTunnel('http://127.0.0.1:41000', new FakeClock(), { dispatcher, timeoutMs: 1000, offPrem });
    expect(r).toMatchObject({ ok: true, error: null });
    expect(offPrem.counts()).toEqual({ proxy: 0, lifecycle: 0, probe: 0 });
  });

  it('refuses a URL off this machine without connecting, and counts it as a probe', async () => {
    const dispatcher = mock(); // no interceptor: a request would fail with a different code
    const offPrem = createOffPremCounter();
    const r = await probeTunnel('http://10.0.0.5:8000', new FakeClock(), { dispatcher, timeoutMs: 1000, offPrem });
    expect(r).toMatchObject({ ok: false, error: { code: OnPremErrorCode.REFUSED, message: expect.stringContaining('http://10.0.0.5:8000') } });
    const t = await testTunnel('http://example.com', 'qwen', new FakeClock(), { dispatcher, timeoutMs: 1000, offPrem });
    expect(t).toMatchObject({ ok: false, error: { code: OnPremErrorCode.REFUSED }, steps: [{ name: 'models', ok: false, status: null }] });
    expect(offPrem.counts()).toEqual({ proxy: 0, lifecycle: 0, probe: 2 });
  });
});
