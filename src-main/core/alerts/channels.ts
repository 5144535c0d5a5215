// Contract channels of the alerts capability (src-preload/contract/alerts.ts):
// thin, each calling the alerts face it is given.
import type { alertsInvokeChannels, Alert, AlertHistory, Baseline, Silence } from '../../../src-preload/contract/index.js';
import { AppError, operatorActor } from '../base/index.js';
import type { HandlersFor } from '../channel.js';
import { AlertsErrorCode } from './errors.js';

type AlertsInput<K extends keyof typeof alertsInvokeChannels> = Parameters<HandlersFor<K>[K]>[0];

/** What the channels call (the telemetry service's engine and the alert book satisfy it). */
export interface AlertsFace {
  list(): Alert[];
  listBaselines(): Baseline[];
  setBaseline(model: string, tokPerS: number, concurrency: number, actor: string): Baseline;
  silences?(): Silence[];
  ack?(id: string, note: string | null, actor: string): Alert;
  silence?(input: AlertsInput<'alerts.silence'>, actor: string): Silence;
  unsilence?(id: string, actor: string): Silence;
  history?(query: AlertsInput<'alerts.history'>): AlertHistory;
}

function missing(what: string): never {
  throw new AppError(AlertsErrorCode.NOT_AVAILABLE, `${what} is not available in this console`);
}

export function alertsChannels(alerts: AlertsFace): HandlersFor<keyof typeof alertsInvokeChannels> {
  return {
    'alerts.list': () => ({ alerts: alerts.list(), baselines: alerts.listBaselines(), silences: alerts.silences?.() ?? [] }),
    'alerts.setBaseline': ({ model, tokPerS, concurrency }, ctx) => alerts.setBaseline(model, tokPerS, concurrency ?? 1, operatorActor(ctx.caller)),
    'alerts.ack': ({ id, note }, ctx) => (alerts.ack ? alerts.ack(id, note ?? null, operatorActor(ctx.caller)) : missing('acknowledging alerts')),
    'alerts.silence': (input, ctx) => (alerts.silence ? alerts.silence(input, operatorActor(ctx.caller)) : missing('silencing alerts')),
    'alerts.unsilence': ({ id }, ctx) => (alerts.unsilence ? alerts.unsilence(id, operatorActor(ctx.caller)) : missing('ending silences')),
    'alerts.history': (query) => (alerts.history ? alerts.history(query) : missing('alert history')),
  };
}
