// A channel's URL as the UI may show it. A Slack incoming webhook's path is
// its credential, an ntfy topic is readable by whoever knows it, query values
// and user info often carry tokens: those are masked; scheme, host and the
// plain parts of a path stay so the operator can tell channels apart.
import type { NotifyChannelConfig } from '../../../src-preload/contract/notify.js';

export const MASK = '•••';

/** A path segment that reads like a token rather than a name (`T0123/B0456/XyZ…`, hex, base64). */
function looksLikeToken(seg: string): boolean {
  if (seg.length >= 24) return true;
  return seg.length >= 12 && /\d/.test(seg) && /[A-Za-z]/.test(seg);
}

export function maskUrl(kind: NotifyChannelConfig['kind'], raw: string): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return MASK;
  }
  const user = u.username || u.password ? `${MASK}@` : '';
  const segments = u.pathname.split('/');
  // Slack: /services/T…/B…/secret — everything after the first segment. ntfy: /<topic> — the topic.
  const keep = kind === 'slack' ? 1 : kind === 'ntfy' ? 0 : Number.POSITIVE_INFINITY;
  let seen = 0;
  const path = segments
    .map((seg) => {
      if (!seg) return seg;
      seen += 1;
      if (seen > keep) return MASK;
      return looksLikeToken(safeDecode(seg)) ? MASK : seg;
    })
    .join('/');
  const query = [...u.searchParams.keys()].map((k) => `${encodeURIComponent(k)}=${MASK}`).join('&');
  return `${u.protocol}//${user}${u.host}${path === '/' ? '' : path}${query ? `?${query}` : ''}`;
}

function safeDecode(seg: string): string {
  try {
    return decodeURIComponent(seg);
  } catch {
    return seg;
  }
}
