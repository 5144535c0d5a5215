import { describe, expect, it } from 'vitest';
import { parseConfig, type ConfigIssue } from '../../../../src-main/core/config/index.js';
import { ModelRegistry } from '../../../../src-main/core/proxy/index.js';

// Replicas, weights and group aliases as the config check sees them: each refusal
// names the file, the line and the field.

const opts = { file: 'fleet.yaml', home: '/home/ops' };

/** Two hosts, one service each; line numbers in comments. */
function fleet(modelB: string, aliasesB: string, proxy: string[]): string {
  return [
    'hosts:', // 1
    '  - label: a', // 2
    '    ssh: { host: 10.0.0.1, user: ops, agent: true }', // 3
    '    services:', // 4
    '      - { id: q, kind: vllm, remotePort: 8000, model: Qwen3-32B, aliases: [chat] }', // 5
    '  - label: b', // 6
    '    ssh: { host: 10.0.0.2, user: ops, agent: true }', // 7
    '    services:', // 8
    '      - id: q', // 9
    '        kind: vllm', // 10
    '        remotePort: 8000', // 11
    `        model: ${modelB}`, // 12
    `        aliases: ${aliasesB}`, // 13
    'proxy:', // 14
    ...proxy, // 15…
  ].join('\n') + '\n';
}

function issues(text: string): ConfigIssue[] {
  try {
    parseConfig(text, opts);
  } catch (err) {
    const e = err as { code: string; message: string; details: { file: string; issues: ConfigIssue[] } };
    expect(e.code).toBe('CONFIG_INVALID');
    expect(e.details.file).toBe('fleet.yaml');
    expect(e.message).toMatch(/^fleet\.yaml:\d+:\d+ /);
    return e.details.issues;
  }
  throw new Error('expected CONFIG_INVALID');
}

describe('config: replicas', () => {
  it('a valid replica config parses: one model on two services, a shared alias, weights and groups', () => {
    const config = parseConfig(
      fleet('qwen3-32b', '[chat, fast]', [
        '  upstreams:', // 15
        '    a/q: { weight: 55 }', // 16
        '    b/q: { weight: 0.5 }', // 17
        '  groups:', // 18
        '    best: [chat]', // 19
        '    any: [best, Qwen3-32B]', // 20
      ]),
      opts,
    );
    expect(config.proxy.upstreams['a/q']!.weight).toBe(55);
    expect(config.proxy.upstreams['b/q']!.weight).toBe(0.5);
    expect(config.proxy.groups).toEqual({ best: ['chat'], any: ['best', 'Qwen3-32B'] });
    const registry = ModelRegistry.fromConfig(config);
    expect(registry.lookup('chat')!.replicas.map((r) => r.map((s) => s.key))).toEqual([['a/q', 'b/q']]);
    expect(registry.lookup('any')!.chain).toEqual(['Qwen3-32B']);
  });

  it('an alias shared by two services serving different models is ambiguous: refused at the second, naming the first', () => {
    const found = issues(fleet('gemma-27b', '[chat]', ['  port: 0']));
    expect(found).toEqual([
      {
        path: 'hosts[1].services[0].aliases[0]',
        line: 13,
        column: 19,
        message:
          'model name "chat" is already served by a/q as model "Qwen3-32B" (hosts[0].services[0].aliases[0]); a second service may share a name only as a replica of the same model',
      },
    ]);
  });

  it('a model name served by another service as an alias of a different model is ambiguous too', () => {
    const found = issues(fleet('chat', '[]', ['  port: 0']));
    expect(found).toEqual([expect.objectContaining({ path: 'hosts[1].services[0].model', line: 12, column: 16 })]);
    expect(found[0]!.message).toContain('as model "Qwen3-32B"');
  });

  it('the same model in another case is a replica, not a clash', () => {
    expect(() => parseConfig(fleet('QWEN3-32B', '[chat]', ['  port: 0']), opts)).not.toThrow();
  });

  it.each([
    ['0', '{ weight: 0 }', 16, 20],
    ['-1', '{ weight: -1 }', 16, 20],
  ])('weight %s is refused at its line and field', (_name, value, line, column) => {
    const found = issues(fleet('Qwen3-32B', '[]', ['  upstreams:', `    a/q: ${value}`]));
    expect(found).toEqual([{ path: 'proxy.upstreams.a/q.weight', line, column, message: 'weight must be a positive number' }]);
  });

  it('a negative weight in block style points at its own line', () => {
    const found = issues(fleet('Qwen3-32B', '[]', ['  upstreams:', '    b/q:', '      slots: 2', '      weight: -1']));
    expect(found).toEqual([{ path: 'proxy.upstreams.b/q.weight', line: 18, column: 15, message: 'weight must be a positive number' }]);
  });
});

describe('config: groups', () => {
  const withGroups = (...lines: string[]) => fleet('Qwen3-32B', '[]', ['  groups:', ...lines]);

  it('a fallback cycle a → b → a is refused at the member that closes it', () => {
    const found = issues(
      withGroups(
        '    a: [b, Qwen3-32B]', // 16
        '    b:', // 17
        '      - a', // 18
      ),
    );
    expect(found).toEqual([{ path: 'proxy.groups.b[0]', line: 18, column: 9, message: 'fallback cycle: a → b → a' }]);
  });

  it('a group naming itself is a cycle', () => {
    const found = issues(withGroups('    loop: [Qwen3-32B, Loop]'));
    expect(found).toEqual([{ path: 'proxy.groups.loop[1]', line: 16, column: 23, message: 'fallback cycle: loop → loop' }]);
  });

  it('an unknown model in a group is refused at the member', () => {
    const found = issues(withGroups('    best: [chat, Llama-70B]'));
    expect(found).toEqual([{ path: 'proxy.groups.best[1]', line: 16, column: 18, message: '"Llama-70B" is neither a served model or alias nor a group' }]);
  });

  it.each([
    ['a model', 'qwen3-32b', '    qwen3-32b: [chat]', 16],
    ['an alias', 'CHAT', '    CHAT: [Qwen3-32B]', 11],
  ])('a group named like %s (any case) is refused', (_what, name, line, column) => {
    const found = issues(withGroups(line));
    expect(found).toEqual([
      { path: `proxy.groups.${name}`, line: 16, column, message: `group "${name}" has the name of a served model or alias; give the group its own name` },
    ]);
  });

  it('a member listed twice is refused at the second', () => {
    const found = issues(withGroups('    best: [chat, CHAT]'));
    expect(found).toEqual([{ path: 'proxy.groups.best[1]', line: 16, column: 18, message: '"CHAT" is listed twice in group "best"' }]);
  });

  it('two groups whose names differ only in case are one name: the second is refused', () => {
    const found = issues(
      withGroups(
        '    Fast: [chat]', // 16
        '    fast: [Qwen3-32B]', // 17
      ),
    );
    expect(found).toEqual([
      { path: 'proxy.groups.fast', line: 17, column: 11, message: 'duplicate group name "fast" (first at proxy.groups.Fast); group names match in any case' },
    ]);
  });
});
