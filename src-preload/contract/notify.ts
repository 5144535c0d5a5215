import { z } from 'zod';

export const NotificationSchema = z
  .object({
    id: z.number().int(),
    key: z.string(),
    severity: z.enum(['info', 'warning', 'critical']),
    title: z.string(),
    body: z.string(),
    route: z.string(),
    event: z.enum(['approval.waiting', 'alert.critical', 'alert.warning', 'host.down', 'host.back', 'audit.verify-failed', 'budget.threshold', 'other']).optional(),
    at: z.number(),
    outcome: z.enum(['sent', 'suppressed-dnd', 'rate-limited', 'folded']),
  })
  .strict();
export type ConsoleNotificationView = z.infer<typeof NotificationSchema>;

export const NotificationSettingsSchema = z.object({ doNotDisturb: z.boolean(), until: z.number().nullable() }).strict();

export const notifyInvokeChannels = {
  'notifications.list': {
    input: z.object({ limit: z.number().int().min(1).max(200).default(50) }).strict(),
    output: z.object({ notifications: z.array(NotificationSchema), settings: NotificationSettingsSchema }).strict(),
  },
  'notifications.setDoNotDisturb': {
    input: z.object({ on: z.boolean(), minutes: z.number().int().min(1).max(24 * 60).optional() }).strict(),
    output: NotificationSettingsSchema,
  },
} as const;

export const notifyEventChannels = {
  /** A notification the UI should show (outcome `sent`) or list (any outcome). */
  'notifications.notice': NotificationSchema,
  /** The operator clicked a native notification: show its subject (e.g. `hosts/l20-poc`, `actions`). */
  'notifications.open': z.object({ route: z.string().max(200) }).strict(),
} as const;
