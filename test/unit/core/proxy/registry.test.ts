import { describe, expect, it } from 'vitest';
import { ConfigSchema, type ConfigInput } from '../../../../src-main/core/config/index.js';
import { ModelRegistry } from '../../../../src-main/core/proxy/index.js';

// Names → routes, from a config as people write it: one model on two services is
// one model with two replicas; groups expand (groups of groups too) in fallback order.

type Service = { id: string; model: string; aliases?: string[] };

function registry(hosts: Record<string, Service[]>, proxy: ConfigInput['proxy'] = {}): ModelRegistry {
  const config = ConfigSchema.parse({
    hosts: Object.entries(hosts).map(([label, services], h) => ({
      label,
      ssh: { host: `10.0.0.${h + 1}`, user: 'ops', agent: true },
      services: services.map((s, i) => ({ id: s.id, kind: 'vllm', remotePort: 8000 + i, model: s.model, aliases: s.aliases ?? [] })),
    })),
    proxy,
  });
  return ModelRegistry.fromConfig(config);
}

const keys = (specs: readonly { key: string }[]) => specs.map((s) => s.key);

describe('ModelRegistry: replicas', () => {
  const twoReplicas = () =>
    registry({
      a: [{ id: 'q', model: 'Qwen3-32B', aliases: ['qwen'] }],
      b: [{ id: 'q', model: 'qwen3-32b', aliases: ['fast'] }, { id: 'g', model: 'gemma' }],
    });

  it('two services serving one model → one /v1/models entry naming both replicas', () => {
    const models = twoReplicas().models(1_700_000_000);
    const qwen = models.filter((m) => m.root.toLowerCase() === 'qwen3-32b');
    expect(qwen.map((m) => m.id)).toEqual(['Qwen3-32B', 'qwen', 'fast']);
    expect(qwen[0]).toEqual({
      id: 'Qwen3-32B',
      object: 'model',
      created: 1_700_000_000,
      owned_by: 'gpu-console',
      root: 'Qwen3-32B',
      parent: null,
      replicas: ['a/q', 'b/q'],
    });
    for (const alias of qwen.slice(1)) expect(alias).toMatchObject({ parent: 'Qwen3-32B', replicas: ['a/q', 'b/q'] });
    // A model on one service is owned by that service.
    expect(models.find((m) => m.id === 'gemma')).toMatchObject({ owned_by: 'b/g', replicas: ['b/g'] });
    expect(models.some((m) => m.id === 'qwen3-32b')).toBe(false);
    expect(new Set(models.map((m) => m.id.toLowerCase())).size).toBe(models.length);
  });

  it('the model name, in any case, and an alias on either replica route to both replicas', () => {
    const r = twoReplicas();
    for (const name of ['Qwen3-32B', 'QWEN3-32b', 'qwen', 'fast', 'FAST']) {
      const route = r.lookup(name);
      expect(route, name).toBeDefined();
      expect(route!.chain).toEqual(['Qwen3-32B']);
      expect(route!.replicas.map(keys)).toEqual([['a/q', 'b/q']]);
    }
    expect(keys(r.replicasOf('qwen3-32b'))).toEqual(['a/q', 'b/q']);
    expect(r.lookup('nope')).toBeUndefined();
  });

  it('each replica keeps the model name its service serves (the upstream body uses it)', () => {
    const r = twoReplicas();
    expect(r.lookup('fast')!.replicas[0]!.map((s) => [s.key, s.model])).toEqual([
      ['a/q', 'Qwen3-32B'],
      ['b/q', 'qwen3-32b'],
    ]);
  });

  it('weights come from proxy.upstreams (default 1)', () => {
    const r = registry(
      { a: [{ id: 'q', model: 'M' }], b: [{ id: 'q', model: 'M' }], c: [{ id: 'q', model: 'M' }] },
      { upstreams: { 'a/q': { weight: 55 }, 'b/q': { weight: 30 } } },
    );
    expect(r.replicasOf('M').map((s) => [s.key, s.weight])).toEqual([
      ['a/q', 55],
      ['b/q', 30],
      ['c/q', 1],
    ]);
  });

  it('the Proxy view lists the model once with its replicas and every alias', () => {
    const views = twoReplicas().placementViews();
    expect(views).toContainEqual({ name: 'Qwen3-32B', kind: 'model', chain: ['Qwen3-32B'], replicas: ['a/q', 'b/q'], aliases: ['qwen', 'fast'] });
    expect(views.filter((v) => v.kind === 'model')).toHaveLength(2);
  });
});

describe('ModelRegistry: groups', () => {
  const fleet = () =>
    registry(
      {
        a: [{ id: 'big', model: 'Big-70B', aliases: ['big'] }],
        b: [{ id: 'big', model: 'Big-70B' }, { id: 'mid', model: 'Mid-32B' }],
        c: [{ id: 'small', model: 'Small-8B', aliases: ['small'] }],
      },
      {
        groups: {
          quality: ['big', 'Mid-32B'],
          // A group of groups: quality's models first, then Small; Mid once only.
          any: ['quality', 'mid-32b', 'small'],
          cheap: ['small'],
          everything: ['cheap', 'any'],
        },
      },
    );

  it('a group routes to its models in fallback order, each model with all its replicas', () => {
    const route = fleet().lookup('quality')!;
    expect(route.name).toBe('quality');
    expect(route.chain).toEqual(['Big-70B', 'Mid-32B']);
    expect(route.replicas.map(keys)).toEqual([['a/big', 'b/big'], ['b/mid']]);
  });

  it('a group of groups expands in place, each model once, first mention wins', () => {
    const r = fleet();
    expect(r.lookup('any')!.chain).toEqual(['Big-70B', 'Mid-32B', 'Small-8B']);
    expect(r.lookup('ANY')!.replicas.map(keys)).toEqual([['a/big', 'b/big'], ['b/mid'], ['c/small']]);
    expect(r.lookup('everything')!.chain).toEqual(['Small-8B', 'Big-70B', 'Mid-32B']);
  });

  it('/v1/models lists each group once, with its fallback order and the replicas behind it', () => {
    const models = fleet().models(1);
    expect(models.find((m) => m.id === 'any')).toEqual({
      id: 'any',
      object: 'model',
      created: 1,
      owned_by: 'gpu-console',
      root: 'Big-70B',
      parent: null,
      replicas: ['a/big', 'b/big', 'b/mid', 'c/small'],
      fallback: ['Big-70B', 'Mid-32B', 'Small-8B'],
    });
    expect(models.find((m) => m.id === 'cheap')).toMatchObject({ fallback: ['Small-8B'], replicas: ['c/small'] });
    expect(models.map((m) => m.id)).toEqual(['Big-70B', 'big', 'Mid-32B', 'Small-8B', 'small', 'quality', 'any', 'cheap', 'everything']);
    // Plain models and aliases carry no fallback field.
    expect(models.find((m) => m.id === 'big')).not.toHaveProperty('fallback');
  });

  it('the Proxy view shows groups with their chain', () => {
    expect(fleet().placementViews()).toContainEqual({
      name: 'quality',
      kind: 'group',
      chain: ['Big-70B', 'Mid-32B'],
      replicas: ['a/big', 'b/big', 'b/mid'],
      aliases: [],
    });
  });

  it('a cycle the config check would refuse does not hang the registry (built in code)', () => {
    const spec = registry({ a: [{ id: 's', model: 'M' }] }).upstreams[0]!;
    const r = new ModelRegistry([spec], { x: ['y', 'M'], y: ['x'] });
    expect(r.lookup('x')!.chain).toEqual(['M']);
    expect(r.lookup('y')!.chain).toEqual(['M']);
  });
});
