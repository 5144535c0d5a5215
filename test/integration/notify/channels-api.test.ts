// Through the contract: a config webhook channel, its secret in the secret store; list shows the URL
// masked and no secret, a send test arrives signed at a loopback receiver, the audit row holds no secret.
import { createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Api } from '../../../src-main/core/api.js';
import { startTestApp, type TestApp } from '../../helpers/app.js';

const SECRET = 'whsec-never-shown-9f2';
let dir: string;
let core: TestApp;
let api: Api;
let server: Server;
const got: { headers: IncomingMessage['headers']; body: string }[] = [];

const call = <T,>(channel: string, input: unknown): Promise<T> => core.call<T>(channel, input);

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => { got.push({ headers: req.headers, body }); res.writeHead(204).end(); });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  dir = mkdtempSync(join(tmpdir(), 'gc-notify-'));
  writeFileSync(join(dir, 'config.yaml'), `hosts: []\nnotifications:\n  channels:\n    - id: pager\n      kind: webhook\n      url: http://127.0.0.1:${port}/hook?token=qs-secret\n      secretRef: notify.pager\n      events: [host.down]\n`);
  core = await startTestApp({ dataDir: dir, configFile: join(dir, 'config.yaml'), home: dir });
  api = core.api;
  await call('secrets.set', { name: 'notify.pager', value: SECRET });
});

afterAll(async () => {
  await core?.dispose();
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

describe('notification channels through the api', () => {
  it('lists channels without URL or secret, sends a signed test, audits it without secrets', async () => {
    const list = await call<{ channels: unknown[] }>('notifications.listChannels', {});
    expect(list.channels).toEqual([
      {
        id: 'pager', kind: 'webhook', host: expect.stringMatching(/^127\.0\.0\.1:\d+$/), maskedUrl: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/hook\?token=•••$/),
        events: ['host.down'], minSeverity: 'info', quietHours: null, zulip: null, secretRef: 'notify.pager', maxPerMinute: 10, enabled: true, hasSecret: true, source: 'config',
      },
    ]);
    expect(JSON.stringify(list)).not.toContain('qs-secret');

    const out = await call<{ status: string; httpStatus: number }>('notifications.testChannel', { id: 'pager' });
    expect(out).toMatchObject({ status: 'delivered', httpStatus: 204, attempt: 1 });
    const h = got[0]!;
    const ts = String(h.headers['x-gpu-console-timestamp']);
    expect(h.headers['x-gpu-console-signature']).toBe('sha256=' + createHmac('sha256', SECRET).update(`${ts}.${h.body}`).digest('hex'));
    expect(JSON.parse(h.body)).toMatchObject({ title: 'GPU Console test notification' });

    const unknown = await api.invoke('notifications.testChannel', { id: 'nope' }, { caller: 'test' });
    expect(unknown.ok).toBe(false);

    const db = readFileSync(join(dir, 'gpu-console.db')).toString('latin1');
    for (const s of [SECRET, 'qs-secret']) expect(db).not.toContain(s);
  });
});
