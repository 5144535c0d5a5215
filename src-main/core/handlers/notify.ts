// Contract handlers of notifications (channels in src-preload/contract/notify.ts).
import type { notifyInvokeChannels } from '../../../src-preload/contract/index.js';
import type { App } from '../app.js';
import type { HandlersFor } from './types.js';

export function notifyHandlers(app: App): HandlersFor<keyof typeof notifyInvokeChannels> {
  return {
    'notifications.list': ({ limit }) => ({ notifications: app.notifications.recent(limit), settings: app.notifications.settings() }),
    'notifications.setDoNotDisturb': ({ on, minutes }, ctx) => {
      app.setDoNotDisturb(on, minutes ?? null, ctx.caller);
      return app.notifications.settings();
    },
  };
}
