// The stored side of outside channels: delivery rows (bounded, newest first, no URL or secret), the
// console's own channels in the settings store merged with config.yaml's (config wins, read-only),
// secrets in the secret store only, and audit rows without the URL's secret parts or the secret.
import { afterEach, describe, expect, it } from 'vitest';
import { FakeClock, silentLogger } from '../../../../src-main/core/base/index.js';
import { DeliveryLog, MASK, NotifyChannelRegistry, maskUrl, splitError, urlKey, CHANNELS_SETTING } from '../../../../src-main/core/notify/index.js';
import { MemorySecretStore } from '../../../../src-main/core/secrets/index.js';
import { openStore, type Store } from '../../../../src-main/core/store/index.js';
import { NotifyChannelConfigSchema, NotifyChannelDraftSchema, type NotifyChannelConfig, type NotifyDelivery } from '../../../../src-preload/contract/notify.js';

const cleanups: (() => void)[] = [];
afterEach(() => {
  while (cleanups.length) cleanups.pop()!();
});

function memStore(clock = new FakeClock(1_700_000_000_000)): Store {
  const store = openStore({ file: ':memory:', clock });
  cleanups.push(() => store.close());
  return store;
}

const delivery = (over: Partial<NotifyDelivery> = {}): NotifyDelivery => ({
  channelId: 'c1', event: 'host.down', notificationKey: 'host:a', attempt: 1, status: 'delivered', httpStatus: 204, error: null, at: 1_700_000_000_000, durationMs: 12, ...over,
});

describe('delivery log', () => {
  it('stores rows newest first, filters by channel, and keeps only the newest maxRows', () => {
    const store = memStore();
    const log = new DeliveryLog(store.db, 5);
    for (let i = 0; i < 8; i++) log.record(delivery({ channelId: i % 2 ? 'odd' : 'even', attempt: i + 1, at: 1000 + i }), { severity: 'critical', title: `notice ${i}` });
    const all = log.list({ limit: 100 });
    expect(all.map((r) => r.title)).toEqual(['notice 7', 'notice 6', 'notice 5', 'notice 4', 'notice 3']);
    expect(store.db.prepare('SELECT count(*) AS n FROM notify_deliveries').get()).toEqual({ n: 5 });
    expect(all[0]).toEqual({
      id: 8, at: 1007, channelId: 'odd', event: 'host.down', severity: 'critical', title: 'notice 7', status: 'delivered', httpStatus: 204, attempt: 8, errorCode: null, errorMessage: null, durationMs: 12,
    });
    expect(log.list({ limit: 100, channelId: 'even' }).map((r) => r.title)).toEqual(['notice 6', 'notice 4']);
    expect(log.list({ limit: 2 })).toHaveLength(2);
  });

  it('splits errors into a code and a message, and never keeps a URL', () => {
    expect(splitError('ECONNREFUSED')).toEqual({ code: 'ECONNREFUSED', message: null });
    expect(splitError('HTTP 503')).toEqual({ code: 'HTTP_STATUS', message: 'HTTP 503' });
    expect(splitError('fetch https://hooks.slack.com/services/T1/B2/zzz failed')).toEqual({ code: null, message: 'fetch <url> failed' });
    expect(splitError(null)).toEqual({ code: null, message: null });
    const store = memStore();
    const log = new DeliveryLog(store.db);
    log.record(delivery({ status: 'failed', httpStatus: null, error: 'bad http://x.example/hook?token=tk-123 here' }), { severity: 'info', title: 't' });
    expect(JSON.stringify(log.list({ limit: 1 }))).not.toContain('tk-123');
  });

  it('the table has no column for a URL, header, signature or secret', () => {
    const store = memStore();
    const cols = (store.db.prepare('PRAGMA table_info(notify_deliveries)').all() as { name: string }[]).map((c) => c.name);
    expect(cols).toEqual(['id', 'at', 'channel_id', 'event', 'severity', 'title', 'status', 'http_status', 'attempt', 'error_code', 'error_message', 'duration_ms']);
  });
});

describe('masked URLs', () => {
  it('masks a Slack webhook path, an ntfy topic, query values, user info and token-like segments', () => {
    expect(maskUrl('slack', 'https://hooks.slack.com/services/T0001/B0002/abcdefXYZ123')).toBe(`https://hooks.slack.com/services/${MASK}/${MASK}/${MASK}`);
    expect(maskUrl('ntfy', 'https://ntfy.sh/gpu-alerts-7f3a')).toBe(`https://ntfy.sh/${MASK}`);
    expect(maskUrl('webhook', 'http://127.0.0.1:8080/hook?token=qs-secret&x=1')).toBe(`http://127.0.0.1:8080/hook?token=${MASK}&x=${MASK}`);
    expect(maskUrl('webhook', 'https://user:pw@ops.example.org/api/hooks/3f9a0c1d2e4b5a6c7d8e9f00')).toBe(`https://${MASK}@ops.example.org/api/hooks/${MASK}`);
    expect(maskUrl('zulip', 'https://zulip.example.org')).toBe('https://zulip.example.org');
  });
});

async function registry(configChannels: NotifyChannelConfig[] = [], opts: { allowLoopback?: boolean; store?: Store; secrets?: MemorySecretStore } = {}) {
  const store = opts.store ?? memStore();
  const secrets = opts.secrets ?? new MemorySecretStore();
  const deps = { configChannels: () => configChannels, allowLoopback: () => opts.allowLoopback === true, settings: store.settings, secrets, audit: store.audit, logger: silentLogger };
  return { reg: await NotifyChannelRegistry.open(deps), store, secrets, deps };
}

const draft = (over: Record<string, unknown> = {}) =>
  NotifyChannelDraftSchema.parse({ id: 'ops', kind: 'webhook', url: 'https://hooks.example.org/in/3f9a0c1d2e4b5a6c7d8e9f00?token=qs-ui-secret', events: ['host.down'], ...over });

async function rejects(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await p;
  } catch (err) {
    return err as { code: string; message: string };
  }
  throw new Error('expected a rejection');
}

describe('channel registry', () => {
  const SECRET = 'whsec-ui-never-out-42';

  it('saves a console channel with its secret in the secret store only; the view and the audit row hold neither', async () => {
    const { reg, store, secrets } = await registry();
    const out = await reg.save(draft({ quietHours: { from: '22:00', to: '07:00', tz: 'Europe/Berlin' } }), SECRET, 'test');
    expect(out.created).toBe(true);
    expect(out.channel).toMatchObject({ id: 'ops', source: 'ui', hasSecret: true, secretRef: 'notify.ops', quietHours: { from: '22:00', to: '07:00', tz: 'Europe/Berlin' } });
    expect(await secrets.get('notify.ops')).toBe(SECRET);
    const everything = JSON.stringify({ out, list: await reg.list(), settings: store.settings.all(), audit: store.audit.list({ limit: 50 }) });
    expect(everything).not.toContain(SECRET);
    const audit = JSON.stringify(store.audit.list({ limit: 50 }));
    expect(audit).not.toContain('qs-ui-secret');
    expect(audit).not.toContain('3f9a0c1d2e4b5a6c7d8e9f00');
    expect(audit).toContain('notifications.channel.added');
    expect(JSON.stringify(out)).not.toContain('qs-ui-secret');
    expect(reg.all().map((c) => c.id)).toEqual(['ops']);
  });

  it('editing without a URL or secret keeps both; a new secret replaces the stored one; every save is audited', async () => {
    const { reg, store, secrets } = await registry();
    await reg.save(draft(), SECRET, 'test');
    const { url: _omit, ...rest } = draft({ minSeverity: 'warning' });
    const edited = await reg.save(rest, undefined, 'test');
    expect(edited.created).toBe(false);
    expect(reg.find('ops')?.url).toBe(draft().url);
    expect(reg.find('ops')?.minSeverity).toBe('warning');
    expect(await secrets.get('notify.ops')).toBe(SECRET);
    await reg.save(rest, 'rotated-key', 'test');
    expect(await secrets.get('notify.ops')).toBe('rotated-key');
    const types = store.audit.list({ limit: 50 }).map((e) => e.type);
    expect(types.filter((t) => t.startsWith('notifications.channel.'))).toEqual(['notifications.channel.updated', 'notifications.channel.updated', 'notifications.channel.added']);
  });

  it('survives a restart: the channels are read back, the URL from the secret store (never the settings table)', async () => {
    const { reg, deps, store, secrets } = await registry();
    await reg.save(draft(), SECRET, 'test');
    expect(JSON.stringify(store.settings.all())).not.toContain('hooks.example.org');
    expect(await secrets.get(urlKey('ops'))).toBe(draft().url);
    const again = await NotifyChannelRegistry.open(deps);
    expect(again.all()).toEqual(reg.all());
  });

  it('an entry that cannot be read back is not in force but is kept, not dropped, by the next save', async () => {
    const { store, deps, secrets } = await registry();
    const bad = { channel: { id: 'bad', kind: 'pager' }, ownsSecret: false };
    const lost = { channel: { id: 'lost', kind: 'slack', events: ['other'] }, ownsSecret: false };
    const ok = { channel: { id: 'ok', kind: 'slack', events: ['other'] }, ownsSecret: false };
    await secrets.set(urlKey('bad'), 'https://x.example.org/h');
    await secrets.set(urlKey('ok'), 'https://hooks.slack.com/services/a/b/c');
    store.settings.set(CHANNELS_SETTING, [bad, lost, ok]);
    const reg = await NotifyChannelRegistry.open(deps);
    expect(reg.all().map((c) => c.id)).toEqual(['ok']);
    await reg.save(draft(), SECRET, 'test');
    expect((store.settings.get<{ channel: { id: string } }[]>(CHANNELS_SETTING) ?? []).map((e) => e.channel.id).sort()).toEqual(['bad', 'lost', 'ok', 'ops']);
  });

  it('config.yaml channels are listed first, read-only, and win an id clash', async () => {
    const pager = NotifyChannelConfigSchema.parse({ id: 'pager', kind: 'webhook', url: 'http://127.0.0.1:9/hook', events: ['host.down'], secretRef: 'notify.pager' });
    const { reg } = await registry([pager]);
    expect(await rejects(reg.save(draft({ id: 'pager' }), SECRET, 'test'))).toMatchObject({ code: 'NOTIFY_CHANNEL_READ_ONLY', message: expect.stringContaining('config.yaml') });
    expect(await rejects(reg.remove('pager', 'test'))).toMatchObject({ code: 'NOTIFY_CHANNEL_READ_ONLY' });
    await reg.save(draft(), SECRET, 'test');
    expect((await reg.list()).map((c) => [c.id, c.source])).toEqual([['pager', 'config'], ['ops', 'ui']]);
  });

  it('bad input gets an error naming the field', async () => {
    const { reg } = await registry();
    const { url: _omit, ...noUrl } = draft();
    expect(await rejects(reg.save(noUrl, SECRET, 'test'))).toMatchObject({ code: 'NOTIFY_CHANNEL_INVALID', message: expect.stringMatching(/^channel\.url: /) });
    expect(await rejects(reg.save(draft(), undefined, 'test'))).toMatchObject({ code: 'NOTIFY_SECRET_MISSING', message: expect.stringMatching(/^secret: .*notify\.ops/) });
    expect(await rejects(reg.save(draft({ secretRef: 'notify.other' }), SECRET, 'test'))).toMatchObject({ code: 'NOTIFY_SECRET_REF_FORBIDDEN', message: expect.stringMatching(/^channel\.secretRef: notify\.other /) });
    // Another capability's secret or a channel's stored URL is not even a notification secret name.
    for (const ref of ['proxy.upstream-key', 'notify.other.url']) expect(NotifyChannelDraftSchema.safeParse({ ...draft(), secretRef: ref }).error?.issues[0]?.path, ref).toEqual(['secretRef']);
    expect(await rejects(reg.save(draft({ kind: 'slack' }), SECRET, 'test'))).toMatchObject({ code: 'NOTIFY_CHANNEL_INVALID', message: expect.stringMatching(/^channel\.secret: /) });
    expect(await rejects(reg.save(draft({ kind: 'zulip' }), SECRET, 'test'))).toMatchObject({ code: 'NOTIFY_CHANNEL_INVALID', message: expect.stringContaining('channel.zulip: ') });
    // The schema itself names fields the contract refuses before the registry sees them.
    const bad = NotifyChannelDraftSchema.safeParse({ id: 'ops', kind: 'webhook', url: 'not a url', events: [], quietHours: { from: '25:00', to: '07:00', tz: 'Mars/Olympus' } });
    expect(bad.success).toBe(false);
    expect([...new Set(bad.error!.issues.map((i) => i.path.join('.')))].sort()).toEqual(['events', 'quietHours.from', 'quietHours.tz', 'url']);
    expect(reg.all()).toEqual([]);
  });

  it('remove deletes the channel and the secret it stored (audited without it); unknown ids are refused', async () => {
    const { reg, store, secrets } = await registry();
    await reg.save(draft(), SECRET, 'test');
    expect(await reg.remove('ops', 'test')).toEqual({ removed: true });
    expect(reg.all()).toEqual([]);
    expect(await secrets.get('notify.ops')).toBeNull();
    expect(await secrets.get(urlKey('ops'))).toBeNull();
    expect(await rejects(reg.remove('ops', 'test'))).toMatchObject({ code: 'NOTIFY_CHANNEL_UNKNOWN' });
    const removed = store.audit.list({ limit: 50 }).find((e) => e.type === 'notifications.channel.removed');
    expect(removed?.payload).toMatchObject({ kind: 'webhook', host: 'hooks.example.org', ref: 'notify.ops', deletedStoredValue: true });
    expect(JSON.stringify(store.audit.list({ limit: 50 }))).not.toContain(SECRET);
  });

  it('a value stored under notify.<id> by other means is not picked up by a new channel, and is left as it is', async () => {
    const { reg, secrets } = await registry();
    await secrets.set('notify.ops', 'left-by-a-removed-config-channel');
    expect(await rejects(reg.save(draft(), undefined, 'test'))).toMatchObject({ code: 'NOTIFY_SECRET_MISSING', message: expect.stringMatching(/^secret: /) });
    expect(reg.all()).toEqual([]);
    expect(await secrets.get('notify.ops')).toBe('left-by-a-removed-config-channel');
  });
});
