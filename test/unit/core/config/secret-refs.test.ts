import { describe, expect, it } from 'vitest';
import { parseConfig, type ConfigIssue } from '../../../../src-main/core/config/index.js';

// A secret reaches only its own destination: an upstream's apiKeyRef is sent as Bearer to that
// model server, so it must not name a notification channel's secret (notify.*), which belongs
// to a Slack/Zulip/ntfy/webhook destination.

const opts = { file: 'fleet.yaml', home: '/home/ops' };
const fleet = (ref: string) =>
  [
    'hosts:',
    '  - label: a',
    '    ssh: { host: 10.0.0.1, user: ops, agent: true }',
    '    services:',
    '      - { id: q, kind: vllm, remotePort: 8000, model: Qwen3-32B }',
    'proxy:',
    '  upstreams:',
    `    a/q: { apiKeyRef: ${ref} }`,
  ].join('\n') + '\n';

function issues(text: string): ConfigIssue[] {
  try {
    parseConfig(text, opts);
  } catch (err) {
    return (err as { details: { issues: ConfigIssue[] } }).details.issues;
  }
  return [];
}

describe('config: upstream apiKeyRef', () => {
  it('names an upstream key', () => {
    expect(issues(fleet('upstream.apikey.qwen'))).toEqual([]);
  });

  it.each(['notify.oncall-slack', 'NOTIFY.zulip', 'notify.ops.url'])('refuses %s, a notification channel secret, at its line and field', (ref) => {
    const found = issues(fleet(ref));
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ path: 'proxy.upstreams.a/q.apiKeyRef', line: 8, message: expect.stringMatching(/notification channel/) });
  });
});
