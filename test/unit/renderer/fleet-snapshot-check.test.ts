// The hand-written fleet.tick check must agree with FleetSnapshotSchema: it
// accepts every valid payload here, and never accepts one zod rejects.
import { describe, expect, it } from 'vitest';
import { FleetSnapshotSchema } from '../../../src-preload/contract/index.js';
import { isFleetSnapshot } from '../../../src-renderer/src/transport/fleet-snapshot-check.js';
import { parseEventPayload } from '../../../src-renderer/src/transport/envelope.js';
import { host, service, snapshot } from './fixtures/fleet.js';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

function rich(): Json {
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
      service('b', { tunnel: { state: 'idle', localUrl: null, lastError: null, lastProbe: null, lastTest: null } }),
    ],
  });
  const bare = host('bare', { gpus: [], services: [], gpuModel: null, pricePerHourUsd: null, updatedAt: null, state: 'awaiting-trust', hostKey: null, credentialPrompt: null, jumpHost: null });
  return JSON.parse(JSON.stringify(snapshot(1_700_000_000_000, [full, bare, host('plain')]))) as Json;
}

/** Every path to a value in the payload (object keys and array indices). */
function paths(value: Json, prefix: Array<string | number> = []): Array<Array<string | number>> {
  const out: Array<Array<string | number>> = [];
  if (Array.isArray(value)) value.forEach((v, i) => out.push([...prefix, i], ...paths(v, [...prefix, i])));
  else if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) out.push([...prefix, k], ...paths(v, [...prefix, k]));
  return out;
}

function mutate(root: Json, path: Array<string | number>, fn: (parent: Record<string | number, Json>, key: string | number) => void): Json {
  const copy = JSON.parse(JSON.stringify(root)) as Json;
  let parent = copy as unknown as Record<string | number, Json>;
  for (const k of path.slice(0, -1)) parent = parent[k] as unknown as Record<string | number, Json>;
  fn(parent, path[path.length - 1]!);
  return copy;
}

const REPLACEMENTS: Json[] = [null, 'x', 'connected', 1.5, 3, -1, 2 ** 60, true, [], {}, ['x'], { code: 'a', message: 'b' }];

describe('isFleetSnapshot', () => {
  it('accepts valid payloads that zod accepts', () => {
    const payload = rich();
    expect(FleetSnapshotSchema.safeParse(payload).success).toBe(true);
    expect(isFleetSnapshot(payload)).toBe(true);
    expect(isFleetSnapshot({ at: 0, hosts: [] })).toBe(true);
  });

  it('never accepts a payload zod rejects (every field replaced, removed, or an extra key added)', () => {
    const payload = rich();
    let rejected = 0;
    let agreed = 0;
    for (const path of paths(payload)) {
      const variants: Json[] = [
        ...REPLACEMENTS.map((r) => mutate(payload, path, (p, k) => void (p[k] = r))),
        mutate(payload, path, (p, k) => (Array.isArray(p) ? p.splice(Number(k), 1) : delete p[k])),
        mutate(payload, path, (p, k) => {
          const v = p[k];
          if (v !== null && typeof v === 'object' && !Array.isArray(v)) (v as Record<string, Json>).extra = 1;
        }),
      ];
      for (const variant of variants) {
        const zodOk = FleetSnapshotSchema.safeParse(variant).success;
        const fastOk = isFleetSnapshot(variant);
        if (fastOk) expect(zodOk, `accepted what zod rejects at ${path.join('.')}: ${JSON.stringify(variant).slice(0, 80)}`).toBe(true);
        if (!zodOk) rejected++;
        if (zodOk === fastOk) agreed++;
      }
    }
    expect(rejected).toBeGreaterThan(500);
    // the check is exact on these, not only conservative
    expect(agreed).toBe(paths(payload).length * (REPLACEMENTS.length + 2));
  });

  it('rejects non-finite numbers, non-plain objects and bad roots', () => {
    const base = rich() as { at: number; hosts: Json[] };
    expect(isFleetSnapshot({ ...base, at: Number.NaN })).toBe(false);
    expect(isFleetSnapshot({ ...base, at: Infinity })).toBe(false);
    expect(isFleetSnapshot(Object.assign(Object.create({ inherited: 1 }) as object, base))).toBe(false);
    for (const bad of [null, undefined, [], 'x', 1]) expect(isFleetSnapshot(bad)).toBe(false);
  });

  it('fleet.tick still reports and drops what the check and zod refuse', () => {
    const reports: string[] = [];
    expect(parseEventPayload('fleet.tick', { at: 'nope', hosts: [] }, (m) => reports.push(m))).toBeNull();
    expect(reports[0]).toMatch(/^fleet\.tick: at:/);
    const ok = rich();
    expect(parseEventPayload('fleet.tick', ok, (m) => reports.push(m))).toBe(ok);
    expect(reports).toHaveLength(1);
  });
});
