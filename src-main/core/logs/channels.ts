// Contract channels of the logs capability (src-preload/contract/logs.ts).
// Typed from the logs table itself rather than HandlersFor: they are registered
// in the contract's channel table together with their wiring in app.ts.
import type { z } from 'zod';
import type { logsInvokeChannels } from '../../../src-preload/contract/index.js';
import type { CallContext } from '../channel.js';
import type { LogFollowEvents } from './follow-events.js';
import type { LogsService } from './logs-service.js';

type LogsChannels = typeof logsInvokeChannels;
export type LogsHandlers = {
  [C in keyof LogsChannels]: (input: z.output<LogsChannels[C]['input']>, ctx: CallContext) => Promise<z.output<LogsChannels[C]['output']>> | z.output<LogsChannels[C]['output']>;
};

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
