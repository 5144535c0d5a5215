// Outside text in a notice (a host's error, a proposal's reason, host and model names) reads as text in
// each channel: no Slack or Zulip mention, no disguised link, no code fence that swallows the rest, no
// header injection for ntfy; the signed webhook keeps the text as it is (JSON carries it escaped).
import { describe, expect, it } from 'vitest';
import { buildRequest, headerText, slackText, zulipText, type ConsoleNotification } from '../../../../src-main/core/notify/index.js';
import { NotifyChannelConfigSchema } from '../../../../src-preload/contract/notify.js';

const ZWSP = '\u200b';
const hostile: ConsoleNotification = {
  id: 3, key: 'action:a1', severity: 'warning', route: 'actions', event: 'approval.waiting', at: 1, outcome: 'sent',
  title: 'Approval needed: restart <!channel> @**all** l20/qwen',
  body: 'reason: see <https://evil.example/x|the runbook> and [docs](https://evil.example/y) @*oncall* @_**Ann** #**ops>alerts** <@U024BE7LH> @here\n```\nfenced\n``` ~~~ & done\u202e',
};
const ch = (kind: string, over: Record<string, unknown> = {}) =>
  NotifyChannelConfigSchema.parse({ id: 'c', kind, url: 'https://chat.example.org/hook', events: ['approval.waiting'], ...(kind === 'slack' ? {} : { secretRef: 'notify.c' }), ...over });

describe('slack', () => {
  it('escapes &, < and > so no <!channel>, <@U…> or <url|text> forms; plain @here is broken too', () => {
    const text = JSON.parse(buildRequest(ch('slack'), hostile, null, 0).body).text as string;
    expect(text).not.toMatch(/<[!@#]|<https?:/);
    expect(text).toContain('&lt;!channel&gt;');
    expect(text).toContain('&lt;https://evil.example/x|the runbook&gt;');
    expect(text).toContain('&lt;@U024BE7LH&gt;');
    expect(text).toContain('&amp; done');
    expect(text).not.toMatch(/@here/);
    expect(text).toContain('\\u202e');
    // The console's own wording around it stays as written.
    expect(text.startsWith('[warning] Approval needed: restart ')).toBe(true);
    expect(slackText('plain text, host l20-poc')).toBe('plain text, host l20-poc');
  });
});

describe('zulip', () => {
  it('breaks mentions, stream links, links and fences; the bold title and severity are the console\'s own', () => {
    const content = new URLSearchParams(buildRequest(ch('zulip', { zulip: { email: 'bot@chat.example.org', stream: 'ops' } }), hostile, 'k', 0).body).get('content')!;
    expect(content.startsWith('**Approval needed: restart <!channel> @\u200b**all** l20/qwen** (warning)\n')).toBe(true);
    for (const live of ['@**', '@*o', '@_**', '#**', '](', '```', '~~~']) expect(content, live).not.toContain(live);
    expect(content).toContain(`[docs]${ZWSP}(https://evil.example/y)`);
    expect(content).toContain(`\`${ZWSP}\`${ZWSP}\``);
    // With the invisible spaces taken out, the reader sees the text as it came.
    expect(content.split(ZWSP).join('')).toContain('[docs](https://evil.example/y) @*oncall* @_**Ann** #**ops>alerts**');
    expect(zulipText('GPU 3 at 91 °C on l20-poc')).toBe('GPU 3 at 91 °C on l20-poc');
  });
  it('a title with a line break stays one line inside the bold', () => {
    const content = new URLSearchParams(buildRequest(ch('zulip', { zulip: { email: 'bot@chat.example.org', stream: 'ops' } }), { ...hostile, title: 'a\n# heading\r\nb' }, 'k', 0).body).get('content')!;
    expect(content.split('\n')[0]).toBe('**a # heading b** (warning)');
  });
});

describe('ntfy', () => {
  it('the title header is printable ASCII only (no CR/LF to start a header); the body is plain text with controls shown', () => {
    const req = buildRequest(ch('ntfy'), { ...hostile, title: 'down\r\nAuthorization: Bearer x\u202e' }, null, 0);
    expect(req.headers.title).toBe('down??Authorization: Bearer x?');
    expect(req.headers).not.toHaveProperty('markdown');
    expect(req.body).toContain('\\u202e');
    expect(headerText('ok title')).toBe('ok title');
  });
});

describe('webhook', () => {
  it('keeps the text as data: JSON escapes it and the receiver decides how to show it', () => {
    const body = JSON.parse(buildRequest(ch('webhook'), hostile, 'k', 0).body) as { title: string; body: string };
    expect(body).toMatchObject({ title: hostile.title, body: hostile.body });
  });
});
