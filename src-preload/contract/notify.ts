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

const notifyBaseInvokeChannels = {
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

/** Events an outside channel can be routed. */
export const NotifyEventSchema = z.enum(['approval.waiting', 'alert.critical', 'alert.warning', 'host.down', 'host.back', 'audit.verify-failed', 'budget.threshold', 'other']);

const HHMM = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'expected HH:MM (24 h)');

/**
 * One outside channel (Slack incoming webhook, Zulip, ntfy, signed JSON webhook). Holds a
 * reference to its secret (`secretRef`, a key in the secret store), never the secret itself.
 */
export const NotifyChannelConfigSchema = z
  .object({
    id: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,39}$/, 'lower-case letters, digits, - and _ (max 40)'),
    kind: z.enum(['slack', 'zulip', 'ntfy', 'webhook']),
    url: z
      .string()
      .url('not a URL')
      .refine((u) => /^https?:\/\//.test(u), 'must be http:// or https://'),
    events: z.array(NotifyEventSchema).min(1, 'route at least one event'),
    minSeverity: z.enum(['info', 'warning', 'critical']).default('info'),
    quietHours: z.object({ from: HHMM, to: HHMM, tz: z.string().max(64).default('UTC') }).strict().optional(),
    /** Zulip: the bot's e-mail (the API key is the secret), stream and topic. */
    zulip: z.object({ email: z.string().email(), stream: z.string().min(1).max(60), topic: z.string().min(1).max(60).default('GPU Console') }).strict().optional(),
    /** Key in the secret store: Slack webhook path is in `url`; Zulip API key; ntfy bearer token (optional); webhook HMAC key. */
    secretRef: z.string().min(1).max(100).optional(),
    maxPerMinute: z.number().int().min(1).max(120).default(10),
    enabled: z.boolean().default(true),
  })
  .strict()
  .superRefine((c, ctx) => {
    if (c.kind === 'zulip' && !c.zulip) ctx.addIssue({ code: 'custom', path: ['zulip'], message: 'a Zulip channel needs zulip.email and zulip.stream' });
    if ((c.kind === 'zulip' || c.kind === 'webhook') && !c.secretRef) ctx.addIssue({ code: 'custom', path: ['secretRef'], message: `a ${c.kind} channel needs a secret` });
  });
export type NotifyChannelConfig = z.infer<typeof NotifyChannelConfigSchema>;
export type NotifyChannelConfigInput = z.input<typeof NotifyChannelConfigSchema>;

/** One delivery attempt as recorded: no URL, no header, no secret. */
export const NotifyDeliverySchema = z
  .object({
    channelId: z.string(),
    event: NotifyEventSchema,
    notificationKey: z.string(),
    attempt: z.number().int(),
    status: z.enum(['delivered', 'failed', 'retrying', 'skipped-quiet', 'rate-limited', 'dropped-overflow']),
    httpStatus: z.number().int().nullable(),
    error: z.string().nullable(),
    at: z.number(),
    durationMs: z.number().int().nullable(),
  })
  .strict();
export type NotifyDelivery = z.infer<typeof NotifyDeliverySchema>;

/** A configured channel as the UI sees it: no URL (a Slack URL is itself a secret), no secret, only whether one is stored. */
export const NotifyChannelViewSchema = z
  .object({ id: z.string(), kind: z.enum(['slack', 'zulip', 'ntfy', 'webhook']), host: z.string(), events: z.array(NotifyEventSchema), minSeverity: z.enum(['info', 'warning', 'critical']), enabled: z.boolean(), hasSecret: z.boolean() })
  .strict();

export type NotifyChannelView = z.infer<typeof NotifyChannelViewSchema>;

const notifyChannelInvokeChannels = {
  'notifications.listChannels': { input: z.object({}).strict(), output: z.object({ channels: z.array(NotifyChannelViewSchema) }).strict() },
  /** Send a test message to one channel now (routing, quiet hours and rate limit bypassed); answers the last attempt. */
  'notifications.testChannel': { input: z.object({ id: z.string().max(40) }).strict(), output: NotifyDeliverySchema },
} as const;

export const notifyInvokeChannels = { ...notifyBaseInvokeChannels, ...notifyChannelInvokeChannels } as const;
