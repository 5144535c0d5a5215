// Contract channels of notifications (src-preload/contract/notify.ts).
import type { notifyInvokeChannels } from '../../../src-preload/contract/index.js';
import type { HandlersFor } from '../channel.js';
import type { NotificationService } from './service.js';

export function notifyChannels(notifications: NotificationService): HandlersFor<keyof typeof notifyInvokeChannels> {
  return {
    'notifications.list': ({ limit }) => ({ notifications: notifications.recent(limit), settings: notifications.settings() }),
    'notifications.setDoNotDisturb': ({ on, minutes }, ctx) => {
      notifications.setDoNotDisturb(on, minutes ?? null, ctx.caller);
      return notifications.settings();
    },
    'notifications.listChannels': async () => ({ channels: await notifications.listChannels() }),
    'notifications.testChannel': ({ id }, ctx) => notifications.testChannel(id, ctx.caller),
    'notifications.deliveries': ({ limit, channelId }) => ({ deliveries: notifications.deliveries(limit, channelId) }),
    'notifications.saveChannel': ({ channel, secret }, ctx) => notifications.saveChannel(channel, secret, ctx.caller),
    'notifications.removeChannel': ({ id }, ctx) => notifications.removeChannel(id, ctx.caller),
  };
}
