import { describe, expect, it } from 'vitest';
import { createApi } from '../../../../src-main/core/api.js';
import type { ApiHost } from '../../../../src-main/core/api.js';
import type { AppEvent } from '../../../../src-main/core/app.js';
import { AppError, Emitter, silentLogger } from '../../../../src-main/core/base/index.js';

// The API layer is what both bridges call (IPC and web): the schema checks
// here are the IPC payload checks of the foundation issue.

function fakeApp() {
  const events = new Emitter<AppEvent>();
  const connected: string[] = [];
  const fleet = { snapshot: (): unknown => ({ at: 1, hosts: [] }) };
  const channels = {
    'app.info': () => ({
      name: 'GPU Console',
      version: '0.1.0',
      mode: 'electron',
      demo: true,
      dataDir: '/tmp/x',
      configFile: null,
      configError: null,
      proxyUrl: null,
      startedAt: 1,
    }),
    'fleet.snapshot': () => fleet.snapshot(),
    'hosts.connect': async ({ label }: { label: string }) => {
      if (label === 'ghost') throw new AppError('FLEET_UNKNOWN_HOST', 'no host "ghost"');
      connected.push(label);
      return { label, state: 'connecting' };
    },
  };
  const app = { channels, fleet, onEvent: (l: (e: AppEvent) => void) => events.on(l) } as unknown as ApiHost & { fleet: typeof fleet };
  return { app, events, connected };
}

describe('core api', () => {
  it('answers a valid call with {ok:true,data}', async () => {
    const { app } = fakeApp();
    const api = createApi(app, silentLogger);
    const r = await api.invoke('app.info', {});
    expect(r).toMatchObject({ ok: true, data: { name: 'GPU Console', mode: 'electron' } });
  });

  it('rejects an unknown channel with a typed error', async () => {
    const api = createApi(fakeApp().app, silentLogger);
    const r = await api.invoke('hosts.rm-rf', {});
    expect(r).toMatchObject({ ok: false, error: { code: 'CONTRACT_UNKNOWN_CHANNEL' } });
  });

  it.each([
    ['wrong type', { label: 42 }],
    ['unknown key', { label: 'l20-poc', force: true }],
    ['missing field', {}],
    ['not an object', 'l20-poc'],
    ['too long', { label: 'x'.repeat(65) }],
  ])('rejects a payload that fails its schema (%s) and does not call the service', async (_name, input) => {
    const { app, connected } = fakeApp();
    const api = createApi(app, silentLogger);
    const r = await api.invoke('hosts.connect', input);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.code).toBe('CONTRACT_INVALID_INPUT');
      expect(r.error.message).toContain('hosts.connect');
    }
    expect(connected).toEqual([]);
  });

  it('turns a thrown AppError into {ok:false} with its code, never a throw', async () => {
    const api = createApi(fakeApp().app, silentLogger);
    const r = await api.invoke('hosts.connect', { label: 'ghost' });
    expect(r).toEqual({ ok: false, error: { code: 'FLEET_UNKNOWN_HOST', message: 'no host "ghost"', retryable: false, details: {} } });
  });

  it('refuses handler output that breaks its schema instead of passing it on', async () => {
    const { app } = fakeApp();
    app.fleet.snapshot = () => ({ at: 'yesterday', hosts: [] });
    const api = createApi(app, silentLogger);
    const r = await api.invoke('fleet.snapshot', {});
    expect(r).toMatchObject({ ok: false, error: { code: 'CONTRACT_INVALID_OUTPUT' } });
  });

  it('forwards events that match their schema and drops ones that do not', async () => {
    const { app, events } = fakeApp();
    const api = createApi(app, silentLogger);
    const seen: string[] = [];
    api.onEvent((e) => seen.push(e.channel));
    events.fire({ channel: 'host.status', payload: { label: 'a', state: 'connected', message: null } });
    events.fire({ channel: 'host.status', payload: { label: 'a', state: 'exploded', message: null } } as unknown as AppEvent);
    expect(seen).toEqual(['host.status']);
  });
});
