import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../../src-main/core/base/index.js';
import { ConfigSchema } from '../../../../src-main/core/config/schema.js';
import { NotificationService, type ConsoleNotification } from '../../../../src-main/core/notify/index.js';

describe('outside channels wiring', () => {
  it('every notice goes to the outbound dispatcher; a throwing dispatcher does not break the notice', () => {
    const got: ConsoleNotification[] = [];
    const emitted: unknown[] = [];
    const audit = { append: () => ({}) } as never;
    const svc = new NotificationService({ clock: new FakeClock(), audit, emit: ((_c: string, p: unknown) => emitted.push(p)) as never, outbound: { dispatch: (n) => got.push(n) } });
    svc.notify({ key: 'host:a', severity: 'critical', title: 'down', body: '', route: 'fleet/a', event: 'host.down' });
    expect(got.map((n) => n.event)).toEqual(['host.down']);
    const bad = new NotificationService({ clock: new FakeClock(), audit, emit: ((_c: string, p: unknown) => emitted.push(p)) as never, outbound: { dispatch: () => { throw new Error('x'); } } });
    expect(() => bad.notify({ key: 'k', severity: 'info', title: 't', body: '', route: 'fleet' })).not.toThrow();
    expect(emitted).toHaveLength(2);
  });

  it('config: a notifications section parses; a bad channel names its field', () => {
    const ok = ConfigSchema.safeParse({ notifications: { channels: [{ id: 'ops', kind: 'ntfy', url: 'https://ntfy.sh/gpu', events: ['host.down'] }] } });
    expect(ok.success).toBe(true);
    const bad = ConfigSchema.safeParse({ notifications: { channels: [{ id: 'ops', kind: 'webhook', url: 'https://h.example/x', events: ['host.down'] }] } });
    expect(bad.error?.issues[0]?.path).toEqual(['notifications', 'channels', 0, 'secretRef']);
  });
});
