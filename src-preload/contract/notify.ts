import { z } from 'zod';
import { AlertSeriesSchema } from './alerts.js';

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
    /** The figure behind an alert over its recent past (a small chart where the channel can show one). */
    series: AlertSeriesSchema.optional(),
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

const NotifyKindSchema = z.enum(['slack', 'zulip', 'ntfy', 'webhook']);
const NotifySeveritySchema = z.enum(['info', 'warning', 'critical']);
/** An IANA zone name the runtime knows (`Europe/Berlin`, `UTC`): an unknown one would make every quiet-hours check throw. */
const TimeZoneSchema = z
  .string()
  .min(1)
  .max(64)
  .refine((tz) => {
    try {
      new Intl.DateTimeFormat('en-GB', { timeZone: tz });
      return true;
    } catch {
      return false;
    }
  }, 'unknown time zone (an IANA name such as Europe/Berlin or UTC)');
const NotifyQuietHoursSchema = z.object({ from: HHMM, to: HHMM, tz: TimeZoneSchema.default('UTC') }).strict();
const NotifyUrlSchema = z
  .string()
  .max(2000)
  .url('not a URL')
  .refine((u) => /^https?:\/\//.test(u), 'must be http:// or https://');

/** The fields of a channel, before the checks that span fields (NotifyChannelConfigSchema adds them). */
const NotifyChannelFields = {
  id: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,39}$/, 'lower-case letters, digits, - and _ (max 40)'),
  kind: NotifyKindSchema,
  url: NotifyUrlSchema,
  events: z.array(NotifyEventSchema).min(1, 'route at least one event'),
  minSeverity: NotifySeveritySchema.default('info'),
  quietHours: NotifyQuietHoursSchema.optional(),
  /** Zulip: the bot's e-mail (the API key is the secret), stream and topic. */
  zulip: z.object({ email: z.string().email(), stream: z.string().min(1).max(60), topic: z.string().min(1).max(60).default('GPU Console') }).strict().optional(),
  /**
   * Key in the secret store: Zulip API key; ntfy bearer token (optional); webhook HMAC key (a Slack webhook's secret is its
   * `url`). Always `notify.<name>`, one segment: a channel never names another capability's secret (an SSH passphrase, an
   * upstream API key) nor a console channel's stored URL (`notify.<id>.url`). A channel made in the console uses only its own,
   * `notify.<its id>`, bound when it is made.
   */
  secretRef: z
    .string()
    .max(100)
    .regex(/^notify\.[A-Za-z0-9_-]{1,64}$/, 'a notification secret is named notify.<name> (letters, digits, - and _), never another capability\'s secret')
    .optional(),
  maxPerMinute: z.number().int().min(1).max(120).default(10),
  enabled: z.boolean().default(true),
};

/** The checks that span fields: a Zulip channel names its stream; Zulip and webhook channels have a secret. */
function channelRules(c: { kind: string; zulip?: unknown; secretRef?: string }, ctx: z.RefinementCtx): void {
  if (c.kind === 'zulip' && !c.zulip) ctx.addIssue({ code: 'custom', path: ['zulip'], message: 'a Zulip channel needs zulip.email and zulip.stream' });
  if ((c.kind === 'zulip' || c.kind === 'webhook') && !c.secretRef) ctx.addIssue({ code: 'custom', path: ['secretRef'], message: `a ${c.kind} channel needs a secret` });
}

/**
 * One outside channel (Slack incoming webhook, Zulip, ntfy, signed JSON webhook). Holds a
 * reference to its secret (`secretRef`, a key in the secret store), never the secret itself.
 */
export const NotifyChannelConfigSchema = z.object(NotifyChannelFields).strict().superRefine(channelRules);
export type NotifyChannelConfig = z.infer<typeof NotifyChannelConfigSchema>;
export type NotifyChannelConfigInput = z.input<typeof NotifyChannelConfigSchema>;

/** config.yaml's `notifications` section: the operator's channels, and the switch that lets channels made in the console send to loopback. */
export const NotifyConfigSchema = z
  .object({
    channels: z.array(NotifyChannelConfigSchema).default([]),
    /**
     * Channels made in the console (through the UI, CLI or web bridge) may send to 127.0.0.0/8 and ::1. Off by default: a
     * caller of the bridge could otherwise use "Send test" to probe local ports. For tests and single-machine receivers;
     * config.yaml's own channels may always name any address.
     */
    allowLoopback: z.boolean().default(false),
  })
  .strict();
export type NotifyConfig = z.infer<typeof NotifyConfigSchema>;

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

/**
 * A configured channel as the UI sees it: the URL masked (a Slack webhook's path, query values and
 * user info are secrets), no secret, only whether one is stored; where it is kept (`config` = the
 * operator's config.yaml, read-only here; `ui` = added in the console, kept in its settings).
 */
export const NotifyChannelViewSchema = z
  .object({
    id: z.string(),
    kind: NotifyKindSchema,
    host: z.string(),
    maskedUrl: z.string(),
    events: z.array(NotifyEventSchema),
    minSeverity: NotifySeveritySchema,
    quietHours: z.object({ from: z.string(), to: z.string(), tz: z.string() }).strict().nullable(),
    zulip: z.object({ email: z.string(), stream: z.string(), topic: z.string() }).strict().nullable(),
    secretRef: z.string().nullable(),
    maxPerMinute: z.number().int(),
    enabled: z.boolean(),
    hasSecret: z.boolean(),
    source: z.enum(['config', 'ui']),
  })
  .strict();

export type NotifyChannelView = z.infer<typeof NotifyChannelViewSchema>;

/**
 * What the Add / Edit form sends: a channel, where `url` may be left out when editing a channel
 * made in the console (its stored URL is kept: the UI never sees it whole). `secretRef` may be left
 * out (main names the secret `notify.<id>`); given, it must be exactly that name.
 */
export const NotifyChannelDraftSchema = z
  .object({ ...NotifyChannelFields, url: NotifyUrlSchema.optional() })
  .strict();
export type NotifyChannelDraft = z.input<typeof NotifyChannelDraftSchema>;

/** One stored delivery attempt (table notify_deliveries): no URL, header, signature or secret. */
export const NotifyDeliveryRowSchema = z
  .object({
    id: z.number().int(),
    at: z.number(),
    channelId: z.string(),
    event: NotifyEventSchema,
    severity: NotifySeveritySchema,
    title: z.string(),
    status: NotifyDeliverySchema.shape.status,
    httpStatus: z.number().int().nullable(),
    attempt: z.number().int(),
    errorCode: z.string().nullable(),
    errorMessage: z.string().nullable(),
    durationMs: z.number().int().nullable(),
  })
  .strict();
export type NotifyDeliveryRow = z.infer<typeof NotifyDeliveryRowSchema>;

const notifyChannelInvokeChannels = {
  'notifications.listChannels': { input: z.object({}).strict(), output: z.object({ channels: z.array(NotifyChannelViewSchema) }).strict() },
  /** Send a test message to one channel now (routing, quiet hours and rate limit bypassed); answers the last attempt. */
  'notifications.testChannel': { input: z.object({ id: z.string().max(40) }).strict(), output: NotifyDeliverySchema },
  /** Stored delivery attempts, newest first (the newest 5,000 are kept). */
  'notifications.deliveries': {
    input: z.object({ limit: z.number().int().min(1).max(500).default(100), channelId: z.string().max(40).optional() }).strict(),
    output: z.object({ deliveries: z.array(NotifyDeliveryRowSchema) }).strict(),
  },
  /**
   * Add or replace a channel made in the console (config.yaml's are read-only here); `secret`, when
   * given, is stored under the channel's own `notify.<id>` and never answered back. A stored secret goes
   * only to the kind and URL origin it was given for: changing either needs the secret again. A URL on a
   * loopback, link-local or unspecified address is refused (loopback: unless config.yaml sets
   * `notifications.allowLoopback`). Audited without URL or secret.
   */
  'notifications.saveChannel': {
    input: z.object({ channel: NotifyChannelDraftSchema, secret: z.string().min(1).max(4096).optional() }).strict(),
    output: z.object({ channel: NotifyChannelViewSchema, created: z.boolean() }).strict(),
  },
  /** Remove a channel made in the console (and the secret it stored, when no other channel uses it). Audited. */
  'notifications.removeChannel': { input: z.object({ id: z.string().max(40) }).strict(), output: z.object({ removed: z.boolean() }).strict() },
} as const;

export const notifyInvokeChannels = { ...notifyBaseInvokeChannels, ...notifyChannelInvokeChannels } as const;
