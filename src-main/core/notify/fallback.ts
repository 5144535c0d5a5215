// When an outside channel gives up on a notice (its last retry failed, or its
// queue overflowed), the operator must not believe it paged: the console says
// so in the app and on the desktop, with the notice itself. Never sent to an
// outside channel again (no loop through another failing channel).
import type { UndeliveredNotice } from './dispatcher.js';
import type { NotificationInput } from './router.js';

export function fallbackNotice(u: UndeliveredNotice): NotificationInput {
  const { delivery: d, notice: n, channel } = u;
  const why =
    d.status === 'dropped-overflow'
      ? 'its queue was full'
      : `${d.error ?? (d.httpStatus !== null ? `HTTP ${d.httpStatus}` : 'failed')} after ${d.attempt} attempt${d.attempt === 1 ? '' : 's'}`;
  return {
    // One per channel and subject: a second failure of the same page folds into the first.
    key: `undelivered:${channel.id}:${n.key}`,
    severity: n.severity === 'info' ? 'warning' : n.severity,
    title: `Not delivered to ${channel.kind} channel ${channel.id}: ${n.title}`,
    body: `${n.body}${n.body ? '\n' : ''}(${why}; shown here instead)`,
    route: n.route,
    event: 'other',
    ...(n.series ? { series: n.series } : {}),
  };
}
