// A channel's secret reaches only its own destination. A console channel uses only notify.<its id>, and
// only for the kind and URL origin it was given for; a config.yaml channel never names a console channel's
// secret; entries stored before this rule are brought under it; a notice queued before an edit is not
// sent with the new secret; console channels may not name loopback or link-local receivers.
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock, silentLogger } from '../../../../src-main/core/base/index.js';
import { CHANNELS_SETTING, NotifyChannelRegistry, urlKey } from '../../../../src-main/core/notify/index.js';
import { MemorySecretStore } from '../../../../src-main/core/secrets/index.js';
import { openStore, type Store } from '../../../../src-main/core/store/index.js';
import { NotifyChannelConfigSchema, NotifyChannelDraftSchema, type NotifyChannelConfig } from '../../../../src-preload/contract/notify.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

async function registry(configChannels: NotifyChannelConfig[] = [], opts: { allowLoopback?: boolean; store?: Store; secrets?: MemorySecretStore } = {}) {
  let store = opts.store;
  if (!store) {
    const s = openStore({ file: ':memory:', clock: new FakeClock(1_700_000_000_000) });
    cleanups.push(() => s.close());
    store = s;
  }
  const secrets = opts.secrets ?? new MemorySecretStore();
  const deps = { configChannels: () => configChannels, allowLoopback: () => opts.allowLoopback === true, settings: store.settings, secrets, audit: store.audit, logger: silentLogger };
  return { reg: await NotifyChannelRegistry.open(deps), store, secrets };
}

const hook = (over: Record<string, unknown> = {}) => NotifyChannelDraftSchema.parse({ id: 'ops', kind: 'webhook', url: 'https://hooks.example.org/in/a', events: ['host.down'], ...over });
const config = (over: Record<string, unknown>) => NotifyChannelConfigSchema.parse({ id: 'pager', kind: 'webhook', url: 'http://127.0.0.1:9/hook', events: ['host.down'], secretRef: 'notify.pager', ...over });

async function codeOf(p: Promise<unknown>): Promise<{ code: string; message: string; details?: Record<string, unknown> }> {
  try {
    await p;
  } catch (err) {
    return err as { code: string; message: string };
  }
  throw new Error('expected a rejection');
}

describe('a console channel uses only its own secret', () => {
  it('refuses another channel\'s ref, naming the field; nothing is stored or sent', async () => {
    const { reg, secrets } = await registry([config({})]);
    await secrets.set('notify.pager', 'pager-hmac');
    await reg.save(hook(), 'ops-hmac', 'test');
    for (const ref of ['notify.ops', 'notify.pager']) {
      const e = await codeOf(reg.save(hook({ id: 'probe', kind: 'ntfy', url: 'https://probe.example.net/t', secretRef: ref }), undefined, 'test'));
      expect(e, ref).toMatchObject({ code: 'NOTIFY_SECRET_REF_FORBIDDEN', message: expect.stringMatching(/^channel\.secretRef: /), details: { field: 'channel.secretRef', ref } });
    }
    expect(reg.find('probe')).toBeUndefined();
    // Its own name, spelt out, is fine.
    await reg.save(hook({ id: 'probe', kind: 'ntfy', url: 'https://probe.example.net/t', secretRef: 'notify.probe' }), 'probe-token', 'test');
    expect(await reg.secretFor(reg.find('probe')!)).toBe('probe-token');
  });

  it('an id whose secret name config.yaml uses is refused: the console channel would share it', async () => {
    const { reg } = await registry([config({ secretRef: 'notify.shared' })]);
    expect(await codeOf(reg.save(hook({ id: 'shared' }), 'k', 'test'))).toMatchObject({ code: 'NOTIFY_CHANNEL_INVALID', message: expect.stringMatching(/^channel\.id: .*pager/) });
  });

  it('a stored secret follows the channel only to the kind and URL origin it was given for', async () => {
    const { reg, secrets } = await registry();
    await reg.save(hook(), 'ops-hmac', 'test');
    const { url: _u, ...noUrl } = hook();
    // Same origin, another path: kept.
    await reg.save({ ...noUrl, url: 'https://hooks.example.org/in/b' }, undefined, 'test');
    expect(await reg.secretFor(reg.find('ops')!)).toBe('ops-hmac');
    // Another host, or another kind, without the secret: refused, nothing changed.
    for (const over of [{ url: 'https://listener.example.net/in' }, { url: 'http://hooks.example.org:8080/in/b' }, { kind: 'zulip', zulip: { email: 'b@x.org', stream: 's' } }]) {
      const e = await codeOf(reg.save(hook(over), undefined, 'test'));
      expect(e, JSON.stringify(over)).toMatchObject({ code: 'NOTIFY_SECRET_DESTINATION_CHANGED', message: expect.stringMatching(/^secret: /), details: { field: 'secret' } });
    }
    expect(reg.find('ops')).toMatchObject({ kind: 'webhook', url: 'https://hooks.example.org/in/b' });
    // Given again, it moves, and the new value is what goes.
    await reg.save(hook({ url: 'https://listener.example.net/in' }), 'new-hmac', 'test');
    expect(await reg.secretFor(reg.find('ops')!)).toBe('new-hmac');
    expect(await secrets.get('notify.ops')).toBe('new-hmac');
  });

  it('a notice queued before an edit or a removal is not sent with what the channel holds now', async () => {
    const { reg } = await registry();
    await reg.save(hook(), 'ops-hmac', 'test');
    const before = reg.find('ops')!;
    await reg.save(hook({ url: 'https://other.example.net/in' }), 'other-hmac', 'test');
    expect(await codeOf(reg.secretFor(before))).toMatchObject({ code: 'NOTIFY_CHANNEL_CHANGED' });
    const now = reg.find('ops')!;
    await reg.remove('ops', 'test');
    expect(await codeOf(reg.secretFor(now))).toMatchObject({ code: 'NOTIFY_CHANNEL_CHANGED' });
  });
});

describe('config.yaml channels', () => {
  it('send their own notify.<name>, to any address (the operator wrote them)', async () => {
    const { reg, secrets } = await registry([config({})]);
    await secrets.set('notify.pager', 'pager-hmac');
    expect(await reg.secretFor(reg.find('pager')!)).toBe('pager-hmac');
    expect(reg.destinationRule(reg.find('pager')!)).toBeNull();
  });

  it('a config channel naming a console channel\'s secret gets nothing, and neither does the console channel', async () => {
    const cfg: NotifyChannelConfig[] = [];
    const { reg } = await registry(cfg);
    await reg.save(hook(), 'ops-hmac', 'test');
    cfg.push(config({ id: 'steal', secretRef: 'notify.ops' }));
    expect(await codeOf(reg.secretFor(reg.find('steal')!))).toMatchObject({ code: 'NOTIFY_SECRET_REF_FORBIDDEN', message: expect.stringContaining('made in the console') });
    expect(await codeOf(reg.secretFor(reg.find('ops')!))).toMatchObject({ code: 'NOTIFY_SECRET_REF_FORBIDDEN', message: expect.stringContaining("config.yaml's channel steal") });
    const views = await reg.list();
    expect(views.map((v) => [v.id, v.hasSecret])).toEqual([['steal', false], ['ops', false]]);
  });
});

describe('entries stored before secrets were bound', () => {
  it('one naming another channel\'s secret is moved to its own, sends nothing secret until given again, and is audited', async () => {
    const first = await registry();
    await first.secrets.set('notify.ops', 'ops-hmac');
    await first.secrets.set(urlKey('ops'), 'https://hooks.example.org/in/a');
    await first.secrets.set(urlKey('probe'), 'https://probe.example.net/t');
    // What the old code let a caller store: a probe channel pointing at ops's secret.
    first.store.settings.set(CHANNELS_SETTING, [
      { channel: { id: 'ops', kind: 'webhook', events: ['host.down'], minSeverity: 'info', maxPerMinute: 10, enabled: true, secretRef: 'notify.ops' }, ownsSecret: true },
      { channel: { id: 'probe', kind: 'ntfy', events: ['host.down'], minSeverity: 'info', maxPerMinute: 10, enabled: true, secretRef: 'notify.ops' }, ownsSecret: false },
    ]);
    const { reg, store } = await registry([], { store: first.store, secrets: first.secrets });
    expect(reg.find('probe')?.secretRef).toBe('notify.probe');
    expect(await codeOf(reg.secretFor(reg.find('probe')!))).toMatchObject({ code: 'NOTIFY_SECRET_MISSING' });
    // The channel that owned its secret keeps it, bound to where it sends now.
    expect(await reg.secretFor(reg.find('ops')!)).toBe('ops-hmac');
    expect(store.audit.list({ limit: 10 }).find((e) => e.type === 'notifications.channel.secret-rebound')).toMatchObject({ actor: 'system', target: 'probe', payload: { from: 'notify.ops', to: 'notify.probe' } });
    // Rewritten in the settings, so the next start reads the bound form.
    const again = await registry([], { store: first.store, secrets: first.secrets });
    expect(await again.reg.secretFor(again.reg.find('ops')!)).toBe('ops-hmac');
    expect(again.store.audit.list({ limit: 20 }).filter((e) => e.type === 'notifications.channel.secret-rebound')).toHaveLength(1);
  });
});

describe('destinations of console channels', () => {
  it('loopback is refused unless allowed; link-local and metadata addresses always; config.yaml channels are not checked', async () => {
    const { reg } = await registry([config({})]);
    for (const url of ['http://127.0.0.1:9/hook', 'http://localhost:9/hook', 'http://[::1]:9/hook']) {
      expect(await codeOf(reg.save(hook({ url }), 'k', 'test')), url).toMatchObject({ code: 'NOTIFY_DESTINATION_REFUSED', message: expect.stringMatching(/^channel\.url: .*loopback/), details: { field: 'channel.url' } });
    }
    expect(reg.destinationRule(reg.find('pager')!)).toBeNull();
    const loose = await registry([], { allowLoopback: true });
    await loose.reg.save(hook({ url: 'http://127.0.0.1:9/hook' }), 'k', 'test');
    expect(loose.reg.destinationRule(loose.reg.find('ops')!)).toEqual({ allowLoopback: true });
    expect(await codeOf(loose.reg.save(hook({ id: 'meta', url: 'http://169.254.169.254/latest' }), 'k', 'test'))).toMatchObject({ code: 'NOTIFY_DESTINATION_REFUSED', message: expect.stringContaining('link-local') });
    await loose.reg.save(hook({ id: 'lan', url: 'http://192.168.1.20:8080/hook' }), 'k', 'test');
    expect(loose.reg.find('lan')).toBeDefined();
  });
});
