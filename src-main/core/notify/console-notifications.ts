// Notifications as the console runs them: config.yaml's channels and those
// added in the console (settings store), one dispatcher for outside channels
// (secrets only to their own destination), deliveries in a bounded table, and
// the service that routes every notice to the UI, the desktop and them.
import { AppError, DisposableStore, type Clock, type Disposable, type Logger } from '../base/index.js';
import type { EventSink } from '../channel.js';
import type { Config } from '../config/index.js';
import type { Notifier, SecretStore } from '../ports.js';
import type { Store } from '../store/index.js';
import { NotifyChannelRegistry } from './channel-registry.js';
import { DeliveryLog } from './delivery-log.js';
import { DeliveryDispatcher } from './dispatcher.js';
import { fallbackNotice } from './fallback.js';
import { NotifyErrorCode } from './errors.js';
import { NotificationService } from './service.js';

export interface ConsoleNotificationsDeps {
  store: Store;
  config: { readonly current: Config };
  secrets: SecretStore;
  notifier: Notifier | null;
  emit: EventSink;
  clock: Clock;
  logger: Logger;
}

/** The service and what must be disposed with it (the dispatcher's queue). */
export async function openConsoleNotifications(deps: ConsoleNotificationsDeps): Promise<{ notifications: NotificationService; disposable: Disposable }> {
  const { store, config, clock, logger } = deps;
  const registry = await NotifyChannelRegistry.open({
    configChannels: () => config.current.notifications?.channels ?? [],
    allowLoopback: () => config.current.notifications?.allowLoopback === true,
    settings: store.settings,
    secrets: deps.secrets,
    audit: store.audit,
    logger,
  });
  const deliveries = new DeliveryLog(store.db);
  const disposables = new DisposableStore();
  const outbound = disposables.add(
    new DeliveryDispatcher({
      clock,
      channels: () => registry.all(),
      // The registry decides which secret a channel may send, and where (channel-registry.ts).
      secret: (c) => registry.secretFor(c),
      destination: (c) => registry.destinationRule(c),
      // Rows carry no URL or secret (dispatcher.ts, delivery-log.ts).
      record: (d, n) => {
        deliveries.record(d, n);
        logger.debug('delivery', { ...d });
      },
    }),
  );
  const notifications = new NotificationService({
    clock,
    audit: store.audit,
    emit: deps.emit,
    notifier: deps.notifier,
    outbound,
    channels: {
      list: () => registry.list(),
      test: (id, n) => {
        const c = registry.find(id);
        if (!c) throw new AppError(NotifyErrorCode.CHANNEL_UNKNOWN, `no notification channel ${id}`);
        return outbound.test(c, n);
      },
      save: (draft, secret, caller) => registry.save(draft, secret, caller),
      remove: (id, caller) => registry.remove(id, caller),
    },
    deliveries,
  });
  disposables.add(
    outbound.onDidGiveUp((u) => {
      logger.warn('outside channel gave up on a notice; shown in the app instead', { channel: u.channel.id, status: u.delivery.status, error: u.delivery.error });
      notifications.notifyHere(fallbackNotice(u));
    }),
  );
  return { notifications, disposable: disposables };
}
