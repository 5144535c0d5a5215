// Contract channels of the logs capability (src-preload/contract/logs.ts).
import type { logsInvokeChannels } from '../../../src-preload/contract/index.js';
import type { HandlersFor } from '../channel.js';
import type { LogFollowEvents } from './follow-events.js';
import type { LogsService } from './logs-service.js';

export type LogsHandlers = HandlersFor<keyof typeof logsInvokeChannels>;

export function logsChannels(logs: LogsService, follows: LogFollowEvents): LogsHandlers {
  return {
    'logs.tail': ({ label, serviceId, lines, sinceMs, filter }, ctx) => logs.tail(label, serviceId, { lines, sinceMs, filter, signal: ctx.signal }),
    'logs.follow': async ({ label, serviceId, lines, sinceMs, filter }) => {
      const f = await follows.start(label, serviceId, { lines, sinceMs, filter });
      return { followId: f.id, source: f.source, leaseMs: follows.leaseMs };
    },
    'logs.renew': ({ followIds }) => follows.renew(followIds),
    'logs.unfollow': ({ followId }) => ({ followId, ended: follows.stop(followId) }),
  };
}
