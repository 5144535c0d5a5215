// The Add / Edit form's state and what it sends. The form never holds a stored
// URL or secret: editing starts with both empty, and empty means "keep what is
// stored" (main keeps it); main validates and names any bad field. The form
// never names a secret: main keeps a channel's secret under its own name, and
// asks for it again when the kind or the URL's host changes.
import type { ChannelInput, NotifyChannelView } from '../../../../src-preload/contract/index.js';

export type ChannelKind = NotifyChannelView['kind'];
export type NotifyEventName = NotifyChannelView['events'][number];
export type Severity = NotifyChannelView['minSeverity'];

export const KINDS: readonly { kind: ChannelKind; label: string }[] = [
  { kind: 'webhook', label: 'Signed webhook (JSON, HMAC-SHA256)' },
  { kind: 'slack', label: 'Slack incoming webhook' },
  { kind: 'zulip', label: 'Zulip stream' },
  { kind: 'ntfy', label: 'ntfy topic' },
];

export const EVENTS: readonly { event: NotifyEventName; label: string }[] = [
  { event: 'host.down', label: 'Host down' },
  { event: 'host.back', label: 'Host back' },
  { event: 'alert.critical', label: 'Critical alert' },
  { event: 'alert.warning', label: 'Warning alert' },
  { event: 'approval.waiting', label: 'Approval waiting' },
  { event: 'budget.threshold', label: 'Budget threshold' },
  { event: 'audit.verify-failed', label: 'Audit check failed' },
  { event: 'other', label: 'Other' },
];

export const SEVERITIES: readonly Severity[] = ['info', 'warning', 'critical'];

export interface ChannelFormState {
  id: string;
  kind: ChannelKind;
  url: string;
  events: NotifyEventName[];
  minSeverity: Severity;
  quietFrom: string;
  quietTo: string;
  quietTz: string;
  zulipEmail: string;
  zulipStream: string;
  zulipTopic: string;
  secret: string;
  /** At most this many messages a minute (1–120); the rest wait, recorded as rate-limited. Text, as typed. */
  maxPerMinute: string;
  enabled: boolean;
}

/** The browser's zone, as quiet hours read most naturally in the operator's own time. */
function localZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  } catch {
    return 'UTC';
  }
}

export function emptyForm(): ChannelFormState {
  return {
    id: '', kind: 'webhook', url: '', events: ['host.down', 'alert.critical', 'approval.waiting'], minSeverity: 'warning',
    quietFrom: '', quietTo: '', quietTz: localZone(), zulipEmail: '', zulipStream: '', zulipTopic: 'GPU Console', secret: '', maxPerMinute: '10', enabled: true,
  };
}

export function formFromView(c: NotifyChannelView): ChannelFormState {
  return {
    id: c.id, kind: c.kind, url: '', events: [...c.events], minSeverity: c.minSeverity,
    quietFrom: c.quietHours?.from ?? '', quietTo: c.quietHours?.to ?? '', quietTz: c.quietHours?.tz ?? localZone(),
    zulipEmail: c.zulip?.email ?? '', zulipStream: c.zulip?.stream ?? '', zulipTopic: c.zulip?.topic ?? 'GPU Console', secret: '', maxPerMinute: String(c.maxPerMinute), enabled: c.enabled,
  };
}

/** What a secret is for each kind, for the field's label; null where the kind has none (Slack: the URL is the secret). */
export function secretLabel(kind: ChannelKind): string | null {
  switch (kind) {
    case 'webhook':
      return 'Signing key (HMAC)';
    case 'zulip':
      return 'Bot API key';
    case 'ntfy':
      return 'Access token (optional)';
    case 'slack':
      return null;
  }
}

/** Problems the form can name before asking main (main checks everything again). */
export function formProblems(f: ChannelFormState, editing: boolean): string[] {
  const out: string[] = [];
  if (!f.id.trim()) out.push('Channel id: required (lower-case letters, digits, - and _).');
  if (!editing && !f.url.trim()) out.push('URL: required.');
  if (f.events.length === 0) out.push('Events: choose at least one.');
  if ((f.quietFrom === '') !== (f.quietTo === '')) out.push('Quiet hours: give both "from" and "to", or neither.');
  if (rateOf(f) === null) out.push('Messages a minute: a whole number from 1 to 120.');
  return out;
}

export function saveInput(f: ChannelFormState, existing: NotifyChannelView | null): ChannelInput<'notifications.saveChannel'> {
  const url = f.url.trim();
  const secret = f.kind === 'slack' ? '' : f.secret;
  return {
    channel: {
      id: f.id.trim(),
      kind: f.kind,
      ...(url ? { url } : {}),
      events: f.events,
      minSeverity: f.minSeverity,
      ...(f.quietFrom && f.quietTo ? { quietHours: { from: f.quietFrom, to: f.quietTo, tz: f.quietTz.trim() || 'UTC' } } : {}),
      ...(f.kind === 'zulip' ? { zulip: { email: f.zulipEmail.trim(), stream: f.zulipStream.trim(), topic: f.zulipTopic.trim() || 'GPU Console' } } : {}),
      maxPerMinute: rateOf(f) ?? existing?.maxPerMinute ?? 10,
      enabled: f.enabled,
    },
    ...(secret ? { secret } : {}),
  };
}

/** The rate limit as typed, or null when it is not a whole number from 1 to 120. */
function rateOf(f: ChannelFormState): number | null {
  const t = f.maxPerMinute.trim();
  if (!/^\d{1,3}$/.test(t)) return null;
  const n = Number(t);
  return n >= 1 && n <= 120 ? n : null;
}

export function eventLabel(e: NotifyEventName): string {
  return EVENTS.find((x) => x.event === e)?.label ?? e;
}
