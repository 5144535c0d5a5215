// Event payloads reach the store only through the contract's own schemas, parsed
// the way the page parses them (zod without its JIT: the CSP has no 'unsafe-eval').
// first, as in the page: zod decides JIT or not when a schema is built
import '../../../src-renderer/src/zod-config.js';
import { describe, expect, it } from 'vitest';
import { FleetSnapshotSchema } from '../../../src-preload/contract/index.js';
import { parseEventPayload } from '../../../src-renderer/src/transport/envelope.js';
import { host, service, snapshot } from './fixtures/fleet.js';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** A fleet.tick that uses every optional and nullable part of the schema, as JSON delivers it. */
function rich(): { at: number; hosts: Array<Record<string, Json>> } {
  const full = host('full', {
    lastError: { code: 'SSH_AUTH', message: 'denied', at: 5 },
    nextRetryAt: 10,
    hostKeyFingerprint: 'SHA256:x',
    hostKey: { status: 'unknown', role: 'jump', endpoint: 'j:22', keyType: 'ssh-ed25519', fingerprint: 'SHA256:y', knownFingerprints: ['a'], knownSource: 'console' },
    credentialPrompt: { kind: 'passphrase', keyFile: '~/.ssh/id', reason: 'incorrect' },
    jumpHost: 'bastion',
    services: [
      service('a', {
        tunnel: {
          state: 'degraded',
          localUrl: null,
          lastError: null,
          lastProbe: { ok: false, at: 1, latencyMs: 2.5, error: { code: 'X', message: 'y' } },
          lastTest: { ok: true, at: 1, totalMs: 3, localUrl: 'u', steps: [{ name: 'chat', ok: true, status: 200, latencyMs: 1, detail: '' }], error: null },
          nextRetryAt: null,
        },
        kind: 'llama-server',
        sleep: 'asleep-2',
        health: 'unknown',
        requestsRunning: null,
        stale: true,
        staleReason: 'scrape failed',
      }),
    ],
  });
  const bare = host('bare', { gpus: [], services: [], gpuModel: null, pricePerHourUsd: null, updatedAt: null, state: 'awaiting-trust' });
  return JSON.parse(JSON.stringify(snapshot(1_700_000_000_000, [full, bare, host('plain')]))) as { at: number; hosts: Array<Record<string, Json>> };
}

describe('parseEventPayload', () => {
  it('passes a valid fleet.tick through FleetSnapshotSchema unchanged', () => {
    const reports: string[] = [];
    const payload = rich();
    expect(parseEventPayload('fleet.tick', payload, (m) => reports.push(m))).toEqual(FleetSnapshotSchema.parse(payload));
    expect(parseEventPayload('fleet.tick', payload, (m) => reports.push(m))).toEqual(payload);
    expect(reports).toEqual([]);
  });

  it('reports and drops a fleet.tick the schema refuses (strict objects, enums, finite numbers, integers)', () => {
    const base = rich();
    const bad: unknown[] = [
      { ...base, at: 'nope' },
      { ...base, at: Number.NaN },
      { ...base, extra: 1 },
      { ...base, hosts: [{ ...base.hosts[0], state: 'sleeping' }] },
      { ...base, hosts: [{ ...base.hosts[0], unknownField: true }] },
      { ...base, hosts: [{ ...base.hosts[2], gpus: [{ ...(base.hosts[2]!['gpus'] as Array<Record<string, Json>>)[0], index: 1.5 }] }] },
      null,
      [],
    ];
    for (const value of bad) {
      const reports: string[] = [];
      expect(parseEventPayload('fleet.tick', value, (m) => reports.push(m)), JSON.stringify(value)?.slice(0, 80)).toBeNull();
      expect(reports).toHaveLength(1);
      expect(reports[0]).toMatch(/^fleet\.tick: /);
    }
  });

  it('parses the other events with their own schemas, and refuses unknown channels', () => {
    const reports: string[] = [];
    const notice = { id: 1, key: 'k', severity: 'info', title: 't', body: 'b', route: 'actions', at: 1, outcome: 'sent' };
    expect(parseEventPayload('notifications.notice', notice, (m) => reports.push(m))).toEqual(notice);
    expect(parseEventPayload('notifications.notice', { ...notice, severity: 'loud' }, (m) => reports.push(m))).toBeNull();
    expect(parseEventPayload('no.such' as 'fleet.tick', {}, (m) => reports.push(m))).toBeNull();
    expect(reports).toEqual([expect.stringMatching(/^notifications\.notice: severity/), 'unknown event channel no.such']);
  });
});
