// Contract handlers of telemetry, cost and alerts (channels in src-preload/contract/telemetry.ts).
import type { telemetryInvokeChannels } from '../../../src-preload/contract/index.js';
import type { App } from '../app.js';
import type { HandlersFor } from './types.js';

export function telemetryHandlers(app: App): HandlersFor<keyof typeof telemetryInvokeChannels> {
  return {
    'telemetry.series': (query) => app.telemetry.series.query(query),
    'cost.summary': (query) => app.telemetry.costSummary(query),
    'alerts.list': () => ({ alerts: app.telemetry.alerts.list(), baselines: app.telemetry.alerts.listBaselines() }),
    'alerts.setBaseline': ({ model, tokPerS }, ctx) => app.telemetry.setBaseline(model, tokPerS, 'manual', app.operatorActor(ctx.caller)),
  };
}
