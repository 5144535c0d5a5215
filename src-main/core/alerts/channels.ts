// Contract channels of the alerts capability (src-preload/contract/alerts.ts):
// thin, each calling the alert book or the baselines it is given.
import type { alertsInvokeChannels, Alert, AlertHistory, Baseline, Silence } from '../../../src-preload/contract/index.js';
import { operatorActor } from '../base/index.js';
import type { HandlersFor } from '../channel.js';

type AlertsInput<K extends keyof typeof alertsInvokeChannels> = Parameters<HandlersFor<K>[K]>[0];

/** What people do about alerts (alert-ops.ts's AlertOps satisfies it). */
export interface AlertBookFace {
  list(): Alert[];
  silences(): Silence[];
  ack(id: string, note: string | null, actor: string): Alert;
  silence(input: AlertsInput<'alerts.silence'>, actor: string): Silence;
  unsilence(id: string, actor: string): Silence;
  history(query: AlertsInput<'alerts.history'>): AlertHistory;
}

/** The degradation rule's baselines (the telemetry service's engine keeps them). */
export interface BaselinesFace {
  listBaselines(): Baseline[];
  setBaseline(model: string, tokPerS: number, concurrency: number, actor: string): Baseline;
}

export function alertsChannels(book: AlertBookFace, baselines: BaselinesFace): HandlersFor<keyof typeof alertsInvokeChannels> {
  return {
    'alerts.list': () => ({ alerts: book.list(), baselines: baselines.listBaselines(), silences: book.silences() }),
    'alerts.setBaseline': ({ model, tokPerS, concurrency }, ctx) => baselines.setBaseline(model, tokPerS, concurrency ?? 1, operatorActor(ctx.caller)),
    'alerts.ack': ({ id, note }, ctx) => book.ack(id, note ?? null, operatorActor(ctx.caller)),
    'alerts.silence': (input, ctx) => book.silence(input, operatorActor(ctx.caller)),
    'alerts.unsilence': ({ id }, ctx) => book.unsilence(id, operatorActor(ctx.caller)),
    'alerts.history': (query) => book.history(query),
  };
}
