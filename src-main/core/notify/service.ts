// The operator's notifications as a service: every notice is kept in the
// in-app list and pushed to the UI; the router decides what is shown natively.
// Do-not-disturb changes are the operator's and are audited.
import type { Clock } from '../base/index.js';
import { operatorActor } from '../base/index.js';
import type { EventSink } from '../channel.js';
import type { Notifier } from '../ports.js';
import type { AuditLog } from '../store/index.js';
import type { NotifyChannelView, NotifyDelivery, NotifyDeliveryRow } from '../../../src-preload/contract/notify.js';
import type { NotifyChannelDraftParsed } from './channel-registry.js';
import { NotifyErrorCode } from './errors.js';
import { AppError } from '../base/index.js';
import { NotificationRouter, type ConsoleNotification, type NotificationInput } from './router.js';

/** What other services need to tell the operator something. */
export interface Notices {
  notify(input: NotificationInput): void;
}

export interface NotificationServiceDeps {
  clock: Clock;
  audit: AuditLog;
  emit: EventSink;
  /** Native notifications (desktop); headless the browser shows them from the event. */
  notifier?: Notifier | null;
  /** Outside channels; enqueues only, never awaited. */
  outbound?: { dispatch(n: ConsoleNotification): void } | null;
  /** Configured outside channels: their views, a send-test, and the console's own channels saved and removed (audited there). */
  channels?: {
    list(): Promise<NotifyChannelView[]>;
    test(id: string, n: ConsoleNotification): Promise<NotifyDelivery>;
    save(draft: NotifyChannelDraftParsed, secret: string | undefined, caller: string): Promise<{ channel: NotifyChannelView; created: boolean }>;
    remove(id: string, caller: string): Promise<{ removed: boolean }>;
  } | null;
  /** Stored delivery attempts, newest first. */
  deliveries?: { list(q: { limit: number; channelId?: string }): NotifyDeliveryRow[] } | null;
}

export class NotificationService implements Notices {
  private readonly router: NotificationRouter;

  constructor(private readonly deps: NotificationServiceDeps) {
    this.router = new NotificationRouter({
      clock: deps.clock,
      deliver: (n) => deps.notifier?.notify({ title: n.title, body: n.body, route: n.route }),
    });
  }

  notify(input: NotificationInput): void {
    const notice = this.router.push(input);
    this.deps.emit('notifications.notice', notice);
    try {
      this.deps.outbound?.dispatch(notice);
    } catch {
      // An outside channel must never break the core's own notice.
    }
  }

  /** In the app and on the desktop only: what an outside channel failed to deliver (fallback.ts). */
  notifyHere(input: NotificationInput): void {
    this.deps.emit('notifications.notice', this.router.push(input));
  }

  recent(limit: number): ConsoleNotification[] {
    return this.router.recent(limit);
  }

  settings(): { doNotDisturb: boolean; until: number | null } {
    return this.router.settings();
  }

  setDoNotDisturb(on: boolean, minutes: number | null, caller: string): void {
    this.router.setDoNotDisturb(on, on && minutes !== null ? this.deps.clock.now() + minutes * 60_000 : null);
    this.deps.audit.append({ type: 'notifications.dnd', actor: operatorActor(caller), target: null, payload: { on, minutes } });
  }

  listChannels(): Promise<NotifyChannelView[]> {
    return this.deps.channels?.list() ?? Promise.resolve([]);
  }

  /** Send a test notice to one channel now; audited (channel id and outcome, never the URL or secret). */
  async testChannel(id: string, caller: string): Promise<NotifyDelivery> {
    if (!this.deps.channels) throw new AppError(NotifyErrorCode.CHANNEL_UNKNOWN, `no notification channel ${id}`);
    const n: ConsoleNotification = { id: 0, key: `test:${id}`, severity: 'info', title: 'GPU Console test notification', body: `Sent by ${caller} to check channel ${id}.`, route: 'notifications', event: 'other', at: this.deps.clock.now(), outcome: 'sent' };
    const d = await this.deps.channels.test(id, n);
    this.deps.audit.append({ type: 'notifications.channel.test', actor: operatorActor(caller), target: id, payload: { status: d.status, httpStatus: d.httpStatus, attempt: d.attempt } });
    return d;
  }

  deliveries(limit: number, channelId?: string): NotifyDeliveryRow[] {
    return this.deps.deliveries?.list(channelId === undefined ? { limit } : { limit, channelId }) ?? [];
  }

  saveChannel(draft: NotifyChannelDraftParsed, secret: string | undefined, caller: string): Promise<{ channel: NotifyChannelView; created: boolean }> {
    if (!this.deps.channels) throw new AppError(NotifyErrorCode.CHANNEL_UNKNOWN, 'outside channels are not available here');
    return this.deps.channels.save(draft, secret, caller);
  }

  removeChannel(id: string, caller: string): Promise<{ removed: boolean }> {
    if (!this.deps.channels) throw new AppError(NotifyErrorCode.CHANNEL_UNKNOWN, `no notification channel ${id}`);
    return this.deps.channels.remove(id, caller);
  }

  /** A native notification was clicked: ask the UI to show its subject. */
  open(route: string): void {
    this.deps.emit('notifications.open', { route });
  }
}
