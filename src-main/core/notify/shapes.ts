// The request each kind of outside channel expects for one notice. Pure: the
// caller supplies the secret and the time; nothing here touches the network.
// A notice's title and body are outside text (markup.ts makes them inert in
// each channel's markup); only the wording written here may use markup.
import { createHmac } from 'node:crypto';
import type { NotifyChannelConfig } from '../../../src-preload/contract/notify.js';
import { headerText, plainText, slackText, zulipLine, zulipText } from './markup.js';
import type { ConsoleNotification } from './router.js';
import { sparkline } from './sparkline.js';

export interface OutboundRequest {
  url: string;
  method: 'POST';
  headers: Record<string, string>;
  body: string;
}

export const SIGNATURE_HEADER = 'x-gpu-console-signature';
export const TIMESTAMP_HEADER = 'x-gpu-console-timestamp';

/** `sha256=<hex>` of HMAC-SHA256(key, `<timestamp>.<raw body>`). */
export function signWebhook(secret: string, timestamp: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}

const NTFY_PRIORITY = { info: '3', warning: '4', critical: '5' } as const;

/**
 * What a text channel adds under the body: the alert's series as a sparkline (its unit is outside text,
 * made inert by the channel's own escaping) and, for alerts, where the console opens on it. Empty for other notices.
 */
function footer(n: ConsoleNotification, inert: (outside: string) => string): string {
  const lines: string[] = [];
  const spark = n.series ? sparkline(n.series) : null;
  if (spark !== null) lines.push(inert(spark));
  if ((n.event === 'alert.critical' || n.event === 'alert.warning') && n.route) lines.push(`In GPU Console: ${inert(n.route)}`);
  return lines.length === 0 ? '' : `\n${lines.join('\n')}`;
}

export function buildRequest(channel: NotifyChannelConfig, n: ConsoleNotification, secret: string | null, nowMs: number): OutboundRequest {
  switch (channel.kind) {
    case 'slack': {
      const text = `[${n.severity}] ${slackText(n.title)}${n.body ? ` — ${slackText(n.body)}` : ''}${footer(n, slackText)}`;
      return { url: channel.url, method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text }) };
    }
    case 'zulip': {
      const z = channel.zulip!;
      const form = new URLSearchParams({ type: 'stream', to: z.stream, topic: z.topic, content: `**${zulipLine(n.title)}** (${n.severity})\n${zulipText(n.body)}${footer(n, zulipText)}` });
      const auth = Buffer.from(`${z.email}:${secret ?? ''}`).toString('base64');
      return {
        url: new URL('/api/v1/messages', channel.url).toString(),
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${auth}` },
        body: form.toString(),
      };
    }
    case 'ntfy': {
      const headers: Record<string, string> = {
        'content-type': 'text/plain; charset=utf-8',
        title: headerText(n.title),
        priority: NTFY_PRIORITY[n.severity],
        tags: [n.severity === 'critical' ? 'rotating_light' : n.severity === 'warning' ? 'warning' : 'information_source', n.event ?? 'other'].join(','),
      };
      if (secret) headers.authorization = `Bearer ${secret}`;
      return { url: channel.url, method: 'POST', headers, body: `${plainText(n.body || n.title)}${footer(n, plainText)}` };
    }
    case 'webhook': {
      // A receiver that can draw gets the series itself (readings' own times, gaps as null).
      const body = JSON.stringify({ id: n.id, key: n.key, event: n.event ?? 'other', severity: n.severity, title: n.title, body: n.body, route: n.route, at: n.at, ...(n.series ? { series: n.series } : {}) });
      const ts = String(Math.floor(nowMs / 1000));
      return {
        url: channel.url,
        method: 'POST',
        headers: { 'content-type': 'application/json', [TIMESTAMP_HEADER]: ts, [SIGNATURE_HEADER]: signWebhook(secret ?? '', ts, body) },
        body,
      };
    }
  }
}
