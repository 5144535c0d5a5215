// Issue #26, finding 3: a caller of the bridge could read any stored notify.* secret by saving an ntfy
// channel that named another channel's secretRef and pointed at a listener of its own (ntfy sends its
// secret as a Bearer token). Through the contract, a real SQLite file, the file secret store and
// loopback listeners: a stored secret never reaches a listener through another channel, through an edit
// of its own channel's URL, or through the secret store's entry for that URL; and with loopback not
// allowed, a console channel cannot make "Send test" a POST to this machine.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Api } from '../../../src-main/core/api.js';
import { startTestApp, type TestApp } from '../../helpers/app.js';

const ZULIP_KEY = 'zulip-api-key-never-elsewhere-31';
const PAGER_KEY = 'pager-hmac-never-elsewhere-77';
const PLANTED = [ZULIP_KEY, PAGER_KEY, Buffer.from(`bot@chat.example.org:${ZULIP_KEY}`).toString('base64')];

interface Listener { server: Server; port: number; got: string[] }
async function listener(): Promise<Listener> {
  const got: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      got.push(`${req.method} ${req.url}\n${JSON.stringify(req.headers)}\n${body}`);
      res.writeHead(200).end('{"result":"success"}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, port: (server.address() as AddressInfo).port, got };
}

let dir: string;
let core: TestApp;
let api: Api;
let receiver: Listener;
let probe: Listener;

async function start(allowLoopback: boolean): Promise<void> {
  writeFileSync(
    join(dir, 'config.yaml'),
    `hosts: []\nnotifications:\n  allowLoopback: ${allowLoopback}\n  channels:\n    - id: pager\n      kind: webhook\n      url: http://127.0.0.1:${receiver.port}/pager\n      secretRef: notify.pager\n      events: [host.down]\n`,
  );
  core = await startTestApp({ dataDir: dir, configFile: join(dir, 'config.yaml'), home: dir });
  api = core.api;
}
async function stop(): Promise<void> {
  await core?.dispose();
}
const invoke = (channel: string, input: unknown) => api.invoke(channel, input, { caller: 'test' });
const zulip = () => ({ id: 'team-zulip', kind: 'zulip', url: `http://127.0.0.1:${receiver.port}`, events: ['host.down'], zulip: { email: 'bot@chat.example.org', stream: 'ops' } });
const probeUrl = () => `http://127.0.0.1:${probe.port}/t`;

beforeAll(async () => {
  [receiver, probe] = await Promise.all([listener(), listener()]);
  dir = mkdtempSync(join(tmpdir(), 'gc-notify-binding-'));
  await start(true);
  expect((await invoke('secrets.set', { name: 'notify.pager', value: PAGER_KEY })).ok).toBe(true);
  const saved = await invoke('notifications.saveChannel', { channel: zulip(), secret: ZULIP_KEY });
  expect(saved.ok).toBe(true);
});

afterAll(async () => {
  await stop();
  await Promise.all([receiver, probe].map((l) => new Promise((r) => { l.server.closeAllConnections(); l.server.close(r); })));
  rmSync(dir, { recursive: true, force: true });
});

describe('a stored secret reaches only its own destination', () => {
  it('an ntfy channel naming another channel\'s secretRef is refused, naming the field; the listener never sees the secret', async () => {
    for (const ref of ['notify.team-zulip', 'notify.pager']) {
      const saved = await invoke('notifications.saveChannel', { channel: { id: 'probe', kind: 'ntfy', url: probeUrl(), events: ['host.down'], secretRef: ref } });
      // Whatever the save answered, a send test is the leak the finding reported.
      await invoke('notifications.testChannel', { id: 'probe' });
      const seen = probe.got.join('\n');
      for (const s of PLANTED) expect(seen, ref).not.toContain(s);
      expect(saved, ref).toMatchObject({ ok: false, error: { code: 'NOTIFY_SECRET_REF_FORBIDDEN', message: expect.stringMatching(/^channel\.secretRef: /), details: { field: 'channel.secretRef' } } });
    }
    const list = await invoke('notifications.listChannels', {});
    expect(list.ok && (list.data as { channels: { id: string }[] }).channels.map((c) => c.id)).toEqual(['pager', 'team-zulip']);
  });

  it('a ref outside the notification namespace is refused by the contract, naming the field', async () => {
    for (const ref of ['notify.team-zulip.url', 'upstream.apikey.qwen', 'ssh.passphrase.l20-poc']) {
      const saved = await invoke('notifications.saveChannel', { channel: { id: 'probe', kind: 'ntfy', url: probeUrl(), events: ['host.down'], secretRef: ref } });
      expect(saved, ref).toMatchObject({ ok: false, error: { code: 'CONTRACT_INVALID_INPUT', message: expect.stringContaining('channel.secretRef') } });
    }
  });

  it('moving a channel to another host needs its secret again; until then it keeps sending where it did', async () => {
    const { url: _u, ...rest } = zulip();
    const moved = await invoke('notifications.saveChannel', { channel: { ...rest, url: probeUrl() } });
    await invoke('notifications.testChannel', { id: 'team-zulip' });
    for (const s of PLANTED) expect(probe.got.join('\n')).not.toContain(s);
    expect(moved).toMatchObject({ ok: false, error: { code: 'NOTIFY_SECRET_DESTINATION_CHANGED', message: expect.stringMatching(/^secret: /) } });
    expect(receiver.got.at(-1)).toMatch(/^POST \/api\/v1\/messages/);
    expect(receiver.got.at(-1)).toContain(PLANTED[2]);
  });

  it('the secret store entry holding a channel\'s URL cannot be rewritten or deleted through secrets.*', async () => {
    const set = await invoke('secrets.set', { name: 'notify.team-zulip.url', value: probeUrl() });
    const del = await invoke('secrets.delete', { name: 'notify.team-zulip.url' });
    expect(set).toMatchObject({ ok: false, error: { code: 'SECRETS_NAME_RESERVED', message: expect.stringMatching(/^name: /) } });
    expect(del).toMatchObject({ ok: false, error: { code: 'SECRETS_NAME_RESERVED' } });
    // The URL is read back from the secret store at start: after a restart the channel still sends to its receiver.
    await stop();
    await start(true);
    const before = receiver.got.length;
    expect(await invoke('notifications.testChannel', { id: 'team-zulip' })).toMatchObject({ ok: true, data: { status: 'delivered' } });
    expect(receiver.got.length).toBe(before + 1);
    for (const s of PLANTED) expect(probe.got.join('\n')).not.toContain(s);
  });
});

describe('a console channel is not a port scanner', () => {
  it('with loopback not allowed, saving one for this machine or a metadata address is refused, naming the field', async () => {
    await stop();
    await start(false);
    for (const url of [probeUrl(), `http://localhost:${probe.port}/t`, 'http://169.254.169.254/latest/meta-data/']) {
      const saved = await invoke('notifications.saveChannel', { channel: { id: 'scan', kind: 'ntfy', url, events: ['host.down'] } });
      expect(saved, url).toMatchObject({ ok: false, error: { code: 'NOTIFY_DESTINATION_REFUSED', message: expect.stringMatching(/^channel\.url: /), details: { field: 'channel.url' } } });
    }
    expect(probe.got.filter((g) => !g.includes('/api/v1/messages'))).toEqual([]);
  });

  it('a stored console channel on loopback is checked again at send: refused once, nothing reaches the port; config.yaml\'s channel still delivers', async () => {
    const before = receiver.got.length;
    const out = await invoke('notifications.testChannel', { id: 'team-zulip' });
    expect(out).toMatchObject({ ok: true, data: { status: 'failed', attempt: 1, error: 'NOTIFY_DESTINATION_REFUSED' } });
    expect(receiver.got.length).toBe(before);
    expect(await invoke('notifications.testChannel', { id: 'pager' })).toMatchObject({ ok: true, data: { status: 'delivered' } });
    expect(receiver.got.at(-1)).toMatch(/^POST \/pager/);
    const rows = await invoke('notifications.deliveries', { limit: 5, channelId: 'team-zulip' });
    expect(rows.ok && (rows.data as { deliveries: unknown[] }).deliveries[0]).toMatchObject({ status: 'failed', errorCode: 'NOTIFY_DESTINATION_REFUSED' });
  });
});
