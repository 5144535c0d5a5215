import { describe, expect, it } from 'vitest';
import { parseConfig, type ConfigIssue } from '../../../../src-main/core/config/index.js';
import { configIssues } from './fixtures.js';
import { fleetSnapshotOf } from '../../../../src-main/core/fleet/snapshot-view.js';

// hosts[].tags (issue #34 item 3): operator-defined name → value, shown,
// searched and grouped by in the fleet overview; a bad tag is refused at load
// naming the field, and the host's label keeps its own rule (at most 63).

const opts = { file: 'config.yaml', home: '/home/me' };
const yaml = (tags: string, label = 'a') => ['hosts:', `  - label: ${label}`, '    ssh: { host: 10.0.0.1, user: ops, agent: true }', ...(tags ? [`    tags: ${tags}`] : [])].join('\n');

const issues = (text: string): ConfigIssue[] => configIssues(text, opts);

describe('host tags', () => {
  it('takes name → value pairs, odd but printable characters included', () => {
    const c = parseConfig(yaml('{ region: kl, rack: "r2/β 东", owner.team: ml-infra }'), opts);
    expect(c.hosts[0]!.tags).toEqual({ region: 'kl', rack: 'r2/β 东', 'owner.team': 'ml-infra' });
    expect(parseConfig(yaml(''), opts).hosts[0]!.tags).toBeUndefined();
  });

  it('refuses a bad name, a control character, an empty or too long value, a number, too many tags — naming the field', () => {
    const seventeen = `{ ${Array.from({ length: 17 }, (_, i) => `t${i}: x`).join(', ')} }`;
    const cases: [string, RegExp][] = [
      ['{ "1rack": r2 }', /tag name must start with a letter/],
      ['{ "rack name": r2 }', /tag name must start with a letter/],
      ['{ rack: "r2\\u0007" }', /1 to 64 printable characters/],
      ['{ rack: "" }', /1 to 64 printable characters/],
      [`{ rack: ${'x'.repeat(65)} }`, /1 to 64 printable characters/],
      ['{ rack: 2 }', /must be text/],
      [seventeen, /at most 16 tags per host/],
    ];
    for (const [tags, message] of cases) {
      const found = issues(yaml(tags));
      expect(found.some((i) => i.path.startsWith('hosts[0].tags') && message.test(i.message)), `${tags}: ${JSON.stringify(found)}`).toBe(true);
    }
  });

  it('a host label of 200 characters is refused naming the rule', () => {
    const found = issues(yaml('', 'h'.repeat(200)));
    expect(found.some((i) => i.path === 'hosts[0].label' && /at most 63/.test(i.message))).toBe(true);
  });

  it('reaches the host view as configured, and is absent when none', () => {
    const c = parseConfig(yaml('{ region: kl }'), opts);
    const state = {
      at: 1,
      hosts: [
        {
          label: 'a',
          config: c.hosts[0]!,
          session: { state: 'connected', lastError: null, nextRetryAt: null, hostKeyFingerprint: null, trustProblem: null, credentialPrompt: null },
          gpus: { readings: [], stale: null, vendor: null, source: null, issues: [] },
          health: null,
          gpuProcesses: null,
          services: [],
          updatedAt: null,
          read: { mode: 'collector', reason: null, clockSkewS: null },
        },
      ],
    };
    const view = fleetSnapshotOf(state as unknown as Parameters<typeof fleetSnapshotOf>[0]).hosts[0]!;
    expect(view.tags).toEqual({ region: 'kl' });
    expect('tags' in fleetSnapshotOf({ ...state, hosts: [{ ...state.hosts[0]!, config: { ...c.hosts[0]!, tags: undefined } }] } as unknown as Parameters<typeof fleetSnapshotOf>[0]).hosts[0]!).toBe(false);
  });
});
