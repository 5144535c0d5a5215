// Through the contract, with a real SQLite file and a loopback receiver: a webhook channel added in the
// console (its secret given once), a signed send test, the stored delivery rows, edits and removal; bad
// input named by field; the secret never answered, audited, or written to the database.
import { createHmac } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Api } from '../../../src-main/core/api.js';
import { startTestApp, type TestApp } from '../../helpers/app.js';

const SECRET = 'whsec-ui-made-never-out-77';
let dir: string;
let core: TestApp;
let api: Api;
let server: Server;
let port: number;
const got: { headers: IncomingMessage['headers']; body: string; url: string }[] = [];

const call = <T,>(channel: string, input: unknown): Promise<T> => core.call<T>(channel, input);
async function fails(channel: string, input: unknown): Promise<{ code: string; message: string }> {
  const r = await api.invoke(channel, input, { caller: 'test' });
  if (r.ok) throw new Error(`${channel} should have failed`);
  return r.error;
}

async function start(): Promise<void> {
  core = await startTestApp({ dataDir: dir, configFile: join(dir, 'config.yaml'), home: dir });
  api = core.api;
}
async function stop(): Promise<void> {
  await core?.dispose();
}

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      got.push({ headers: req.headers, body, url: req.url ?? '' });
      res.writeHead(req.url?.startsWith('/fail') ? 400 : 204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
  dir = mkdtempSync(join(tmpdir(), 'gc-notify-save-'));
  // allowLoopback: the receiver of this test is on loopback, which console channels may not name otherwise.
  writeFileSync(join(dir, 'config.yaml'), `hosts: []\nnotifications:\n  allowLoopback: true\n  channels:\n    - id: pager\n      kind: ntfy\n      url: http://127.0.0.1:${port}/gpu-topic\n      events: [host.down]\n`);
  await start();
});

afterAll(async () => {
  await stop();
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

const hook = () => ({ id: 'ops-hook', kind: 'webhook', url: `http://127.0.0.1:${port}/hook?token=qs-ui-token`, events: ['host.down', 'approval.waiting'], minSeverity: 'warning' });

describe('console-made channels through the api', () => {
  it('saves a webhook channel (secret stored, never answered), sends a signed test, stores the delivery rows', async () => {
    const saved = await call<{ channel: Record<string, unknown>; created: boolean }>('notifications.saveChannel', { channel: hook(), secret: SECRET });
    expect(saved.created).toBe(true);
    expect(saved.channel).toMatchObject({ id: 'ops-hook', source: 'ui', hasSecret: true, secretRef: 'notify.ops-hook', maskedUrl: `http://127.0.0.1:${port}/hook?token=•••` });
    const list = await call<{ channels: { id: string; source: string }[] }>('notifications.listChannels', {});
    expect(list.channels.map((c) => [c.id, c.source])).toEqual([['pager', 'config'], ['ops-hook', 'ui']]);
    expect(JSON.stringify({ saved, list })).not.toMatch(new RegExp(`${SECRET}|qs-ui-token`));

    const out = await call<{ status: string; httpStatus: number }>('notifications.testChannel', { id: 'ops-hook' });
    expect(out).toMatchObject({ status: 'delivered', httpStatus: 204 });
    const h = got.at(-1)!;
    const ts = String(h.headers['x-gpu-console-timestamp']);
    expect(h.headers['x-gpu-console-signature']).toBe('sha256=' + createHmac('sha256', SECRET).update(`${ts}.${h.body}`).digest('hex'));

    await call('notifications.testChannel', { id: 'pager' });
    const rows = await call<{ deliveries: Record<string, unknown>[] }>('notifications.deliveries', { limit: 10 });
    expect(rows.deliveries.map((r) => r.channelId)).toEqual(['pager', 'ops-hook']);
    expect(rows.deliveries[1]).toMatchObject({ channelId: 'ops-hook', event: 'other', severity: 'info', title: 'GPU Console test notification', status: 'delivered', httpStatus: 204, attempt: 1, errorCode: null });
    const one = await call<{ deliveries: unknown[] }>('notifications.deliveries', { limit: 10, channelId: 'ops-hook' });
    expect(one.deliveries).toHaveLength(1);
  });

  it('a failing receiver is stored as a failed row with its HTTP status', async () => {
    const { url: _u, ...rest } = hook();
    await call('notifications.saveChannel', { channel: { ...rest, id: 'bad-hook', url: `http://127.0.0.1:${port}/fail` }, secret: 'k' });
    const out = await call<{ status: string }>('notifications.testChannel', { id: 'bad-hook' });
    expect(out.status).toBe('failed');
    const rows = await call<{ deliveries: Record<string, unknown>[] }>('notifications.deliveries', { limit: 1, channelId: 'bad-hook' });
    expect(rows.deliveries[0]).toMatchObject({ status: 'failed', httpStatus: 400, errorCode: 'HTTP_STATUS', errorMessage: 'HTTP 400' });
    expect(await call('notifications.removeChannel', { id: 'bad-hook' })).toEqual({ removed: true });
  });

  it('bad input is refused naming the field; config.yaml channels are read-only', async () => {
    expect(await fails('notifications.saveChannel', { channel: { ...hook(), url: 'not a url' } })).toMatchObject({ code: 'CONTRACT_INVALID_INPUT', message: expect.stringContaining('channel.url') });
    expect(await fails('notifications.saveChannel', { channel: { ...hook(), kind: 'pager' } })).toMatchObject({ message: expect.stringContaining('channel.kind') });
    expect(await fails('notifications.saveChannel', { channel: { ...hook(), events: [] } })).toMatchObject({ message: expect.stringContaining('channel.events') });
    expect(await fails('notifications.saveChannel', { channel: { ...hook(), quietHours: { from: '22:00', to: '7', tz: 'UTC' } } })).toMatchObject({ message: expect.stringContaining('channel.quietHours.to') });
    expect(await fails('notifications.saveChannel', { channel: { ...hook(), id: 'new-one' } })).toMatchObject({ code: 'NOTIFY_SECRET_MISSING', message: expect.stringMatching(/^secret: /) });
    expect(await fails('notifications.saveChannel', { channel: { ...hook(), id: 'pager' }, secret: 'x' })).toMatchObject({ code: 'NOTIFY_CHANNEL_READ_ONLY' });
    expect(await fails('notifications.removeChannel', { id: 'pager' })).toMatchObject({ code: 'NOTIFY_CHANNEL_READ_ONLY' });
    expect(await fails('notifications.removeChannel', { id: 'nope' })).toMatchObject({ code: 'NOTIFY_CHANNEL_UNKNOWN' });
  });

  it('keeps the channel across a restart; an edit without URL or secret keeps both; remove deletes its secret', async () => {
    await stop();
    await start();
    const { url: _u, ...rest } = hook();
    const edited = await call<{ created: boolean; channel: { minSeverity: string } }>('notifications.saveChannel', { channel: { ...rest, minSeverity: 'critical' } });
    expect(edited).toMatchObject({ created: false, channel: { minSeverity: 'critical' } });
    expect(await call('notifications.testChannel', { id: 'ops-hook' })).toMatchObject({ status: 'delivered' });
    expect(got.at(-1)!.url).toBe('/hook?token=qs-ui-token');
    expect(await call('notifications.removeChannel', { id: 'ops-hook' })).toEqual({ removed: true });
    const names = await call<{ names?: string[] }>('secrets.list', {});
    expect(JSON.stringify(names)).not.toContain('notify.ops-hook');
  });

  it('audit rows name what changed without the secret or the URL token; the database never holds the secret', async () => {
    const audit = await call<{ events: { type: string; payload: unknown }[] }>('audit.list', { limit: 100 });
    const mine = audit.events.filter((e) => e.type.startsWith('notifications.channel.'));
    expect(mine.map((e) => e.type)).toEqual(expect.arrayContaining(['notifications.channel.added', 'notifications.channel.updated', 'notifications.channel.removed', 'notifications.channel.test']));
    const text = JSON.stringify(mine);
    for (const s of [SECRET, 'qs-ui-token', '/hook']) expect(text).not.toContain(s);
    // The database (and its WAL) never holds the key, nor the URL of a console-made channel (kept in the secret store).
    for (const f of ['gpu-console.db', 'gpu-console.db-wal']) {
      if (!existsSync(join(dir, f))) continue;
      const db = readFileSync(join(dir, f)).toString('latin1');
      for (const s of [SECRET, 'qs-ui-token', `127.0.0.1:${port}/hook`]) expect(db).not.toContain(s);
    }
  });
});
