// The console's notifications: `notifications.list`, then each
// `notifications.notice` in front; do-not-disturb; how many arrived unseen;
// and the last click on a native notification (`notifications.open`).
import type { StateCreator } from 'zustand/vanilla';
import type { ChannelOutput, ConsoleNotificationView, EventPayload } from '../../../src-preload/contract/index.js';

export type NotificationSettings = ChannelOutput<'notifications.setDoNotDisturb'>;

/** As many as the bell lists (and asks `notifications.list` for). */
export const NOTIFICATIONS_KEPT = 50;

export interface NotificationsSlice {
  notifications: {
    /** Newest first, at most NOTIFICATIONS_KEPT. */
    items: ConsoleNotificationView[];
    /** Notices that arrived since the operator last opened the list. */
    unseen: number;
    settings: NotificationSettings;
    /** The last notice that arrived as an event (the page shows it as a desktop notification in a browser). */
    latest: ConsoleNotificationView | null;
    /** The last native notification the operator clicked: a new object per click. */
    openRequest: EventPayload<'notifications.open'> | null;
  };
  setNotificationList(out: ChannelOutput<'notifications.list'>): void;
  applyNotice(notice: ConsoleNotificationView): void;
  applyNotificationOpen(request: EventPayload<'notifications.open'>): void;
  setNotificationSettings(settings: NotificationSettings): void;
  markNotificationsSeen(): void;
}

export const createNotificationsSlice: StateCreator<NotificationsSlice, [], [], NotificationsSlice> = (set) => ({
  notifications: { items: [], unseen: 0, settings: { doNotDisturb: false, until: null }, latest: null, openRequest: null },
  setNotificationList: (out) => set((state) => ({ notifications: { ...state.notifications, items: out.notifications, settings: out.settings } })),
  applyNotice: (notice) =>
    set((state) => ({
      notifications: {
        ...state.notifications,
        items: [notice, ...state.notifications.items].slice(0, NOTIFICATIONS_KEPT),
        unseen: state.notifications.unseen + 1,
        latest: notice,
      },
    })),
  applyNotificationOpen: (request) => set((state) => ({ notifications: { ...state.notifications, openRequest: request } })),
  setNotificationSettings: (settings) => set((state) => ({ notifications: { ...state.notifications, settings } })),
  markNotificationsSeen: () => set((state) => (state.notifications.unseen === 0 ? state : { notifications: { ...state.notifications, unseen: 0 } })),
});
