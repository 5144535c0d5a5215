// Notifications for the operator: which events are shown natively (rate
// limits, folding, do-not-disturb) and how fleet changes read as messages.
// Delivery itself is a port (Electron Notification, or the browser's); outside
// channels (config.yaml's and the console's own) get a dispatcher and a stored log;
// a channel's secret goes only to the destination it was given for.
export {
  NotificationRouter,
  type ConsoleNotification,
  type DeliveryOutcome,
  type NotificationInput,
  type NotificationRouterOptions,
  type NotificationSeverity,
  type NotifyEvent,
} from './router.js';
export { hostTransitionNotification } from './fleet-events.js';
export { NotificationService, type Notices, type NotificationServiceDeps } from './service.js';
export { notifyChannels } from './channels.js';
export { attentionLabel, type AttentionCounts } from './attention.js';
export { DeliveryDispatcher, type DeliveryDispatcherOptions, type Sender, type SendResult } from './dispatcher.js';
export { UndiciSender, guardedLookup, refusedAddress, refusedUrlHost, type DestinationRule } from './destination.js';
export { slackText, zulipText, zulipLine, plainText, headerText } from './markup.js';
export { buildRequest, signWebhook, SIGNATURE_HEADER, TIMESTAMP_HEADER, type OutboundRequest } from './shapes.js';
export { inQuietHours } from './quiet-hours.js';
export { DeliveryLog, DEFAULT_MAX_DELIVERY_ROWS, splitError, type DeliverySubject } from './delivery-log.js';
export { NotifyChannelRegistry, CHANNELS_SETTING, urlKey, ownSecretRef, type NotifyChannelRegistryDeps, type NotifyChannelDraftParsed } from './channel-registry.js';
export { maskUrl, MASK } from './mask-url.js';
export { NotifyErrorCode } from './errors.js';
export { openConsoleNotifications, type ConsoleNotificationsDeps } from './console-notifications.js';
