// Decides which events become native notifications: one per key within a
// quiet interval, at most N per minute overall, nothing while do-not-disturb
// is on — but every event is kept in the in-app list, so nothing is lost, only
// not shouted. Critical events bypass the per-key interval, not DND.
import type { Clock } from '../base/index.js';
import type { AlertSeries } from '../../../src-preload/contract/index.js';

export type NotificationSeverity = 'info' | 'warning' | 'critical';

/** What kind of event a notice is, for routing it to outside channels. */
export type NotifyEvent =
  | 'approval.waiting'
  | 'alert.critical'
  | 'alert.warning'
  | 'host.down'
  | 'host.back'
  | 'audit.verify-failed'
  | 'budget.threshold'
  | 'other';

export interface NotificationInput {
  /** Same key = same subject (e.g. `tunnel:l20-poc/qwen`); repeats within the interval are folded. */
  key: string;
  severity: NotificationSeverity;
  title: string;
  body: string;
  /** Where a click leads in the UI, e.g. `fleet/l20-poc`. */
  route: string;
  /** Routing class for outside channels; unset reads as `other`. */
  event?: NotifyEvent;
  /** An alert's judged figure over its recent past: a small chart in the app, a text sparkline in outside channels. */
  series?: AlertSeries;
}

export type DeliveryOutcome = 'sent' | 'suppressed-dnd' | 'rate-limited' | 'folded';

export interface ConsoleNotification extends NotificationInput {
  id: number;
  at: number;
  outcome: DeliveryOutcome;
}

export interface NotificationRouterOptions {
  clock: Clock;
  /** Receives what should be shown natively now. */
  deliver: (n: ConsoleNotification) => void;
  perKeyIntervalMs?: number;
  maxPerMinute?: number;
  historySize?: number;
}

export class NotificationRouter {
  private readonly clock: Clock;
  private readonly deliver: (n: ConsoleNotification) => void;
  private readonly perKeyIntervalMs: number;
  private readonly maxPerMinute: number;
  private readonly historySize: number;
  private readonly lastSentByKey = new Map<string, number>();
  private sentTimes: number[] = [];
  private history: ConsoleNotification[] = [];
  private nextId = 1;
  private dndUntil: number | null = null;

  constructor(options: NotificationRouterOptions) {
    this.clock = options.clock;
    this.deliver = options.deliver;
    this.perKeyIntervalMs = options.perKeyIntervalMs ?? 60_000;
    this.maxPerMinute = options.maxPerMinute ?? 6;
    this.historySize = options.historySize ?? 200;
  }

  /** `untilMs` null = until switched off. */
  setDoNotDisturb(on: boolean, untilMs: number | null = null): void {
    this.dndUntil = on ? (untilMs ?? Number.POSITIVE_INFINITY) : null;
  }

  get doNotDisturb(): boolean {
    return this.dndUntil !== null && this.clock.now() < this.dndUntil;
  }

  /** For the UI: whether DND is on and until when (null = until switched off). */
  settings(): { doNotDisturb: boolean; until: number | null } {
    const on = this.doNotDisturb;
    return { doNotDisturb: on, until: on && Number.isFinite(this.dndUntil) ? this.dndUntil : null };
  }

  push(input: NotificationInput): ConsoleNotification {
    const now = this.clock.now();
    const outcome = this.decide(input, now);
    const n: ConsoleNotification = { ...input, id: this.nextId++, at: now, outcome };
    this.history.push(n);
    if (this.history.length > this.historySize) this.history = this.history.slice(-this.historySize);
    if (outcome === 'sent') {
      this.lastSentByKey.set(input.key, now);
      this.sentTimes.push(now);
      this.deliver(n);
    }
    return n;
  }

  /** Newest first, including those not shown natively. */
  recent(limit = 50): ConsoleNotification[] {
    return this.history.slice(-limit).reverse();
  }

  private decide(input: NotificationInput, now: number): DeliveryOutcome {
    if (this.doNotDisturb) return 'suppressed-dnd';
    const last = this.lastSentByKey.get(input.key);
    if (input.severity !== 'critical' && last !== undefined && now - last < this.perKeyIntervalMs) return 'folded';
    this.sentTimes = this.sentTimes.filter((t) => now - t < 60_000);
    if (this.sentTimes.length >= this.maxPerMinute) return 'rate-limited';
    return 'sent';
  }
}
