// The Add / Edit form's input to notifications.saveChannel: an edit never resends a URL or secret it
// was not given (main keeps the stored ones) and never names a secret; Slack sends no secret; quiet
// hours are both-or-neither.
import { describe, expect, it } from 'vitest';
import { emptyForm, formFromView, formProblems, saveInput } from '../../../../src-renderer/src/features/notify/channel-form.js';
import type { NotifyChannelView } from '../../../../src-preload/contract/index.js';

const view: NotifyChannelView = {
  id: 'ops', kind: 'webhook', host: 'h.example.org', maskedUrl: 'https://h.example.org/hook?token=•••', events: ['host.down'], minSeverity: 'warning',
  quietHours: { from: '22:00', to: '07:00', tz: 'UTC' }, zulip: null, secretRef: 'notify.ops', maxPerMinute: 5, enabled: true, hasSecret: true, source: 'ui',
};

describe('channel form', () => {
  it('a new webhook sends its URL, events, quiet hours and the typed secret', () => {
    const f = { ...emptyForm(), id: 'ops', url: ' https://h.example.org/hook ', events: ['host.down' as const], quietFrom: '22:00', quietTo: '07:00', quietTz: 'Europe/Berlin', secret: 'k' };
    expect(saveInput(f, null)).toEqual({
      channel: { id: 'ops', kind: 'webhook', url: 'https://h.example.org/hook', events: ['host.down'], minSeverity: 'warning', quietHours: { from: '22:00', to: '07:00', tz: 'Europe/Berlin' }, maxPerMinute: 10, enabled: true },
      secret: 'k',
    });
  });

  it('an edit starts with no URL or secret and sends neither unless typed, nor ever a secret name (main binds it); it keeps the rate', () => {
    const f = formFromView(view);
    expect(f.url).toBe('');
    expect(f.secret).toBe('');
    const input = saveInput(f, view);
    expect(input).not.toHaveProperty('secret');
    expect(input.channel).not.toHaveProperty('url');
    expect(input.channel).not.toHaveProperty('secretRef');
    expect(input.channel).toMatchObject({ maxPerMinute: 5 });
    expect(formProblems(f, true)).toEqual([]);
  });

  it('Slack sends no secret; missing fields are named before asking main', () => {
    expect(saveInput({ ...emptyForm(), id: 's', kind: 'slack', url: 'https://hooks.slack.com/services/a/b/c', secret: 'typed-before-switching' }, null)).not.toHaveProperty('secret');
    expect(formProblems({ ...emptyForm(), events: [], quietFrom: '22:00' }, false)).toEqual([
      'Channel id: required (lower-case letters, digits, - and _).',
      'URL: required.',
      'Events: choose at least one.',
      'Quiet hours: give both "from" and "to", or neither.',
    ]);
  });

  it('the rate limit is edited as typed: a whole number from 1 to 120 is sent, anything else is named', () => {
    const base = { ...emptyForm(), id: 'ops', url: 'https://h.example.org/hook' };
    expect(saveInput({ ...base, maxPerMinute: ' 30 ' }, null).channel.maxPerMinute).toBe(30);
    expect(saveInput(formFromView(view), view).channel.maxPerMinute).toBe(5);
    expect(saveInput({ ...formFromView(view), maxPerMinute: '60' }, view).channel.maxPerMinute).toBe(60);
    for (const bad of ['0', '121', '2.5', '-3', '', 'ten', '1e2']) {
      expect(formProblems({ ...base, maxPerMinute: bad }, false), bad).toEqual(['Messages a minute: a whole number from 1 to 120.']);
    }
    expect(formProblems({ ...base, maxPerMinute: '120' }, false)).toEqual([]);
  });
});
