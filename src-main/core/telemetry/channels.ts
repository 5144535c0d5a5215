// Contract channels of telemetry, cost and alerts (src-preload/contract/telemetry.ts).
import type { telemetryInvokeChannels } from '../../../src-preload/contract/index.js';
import { operatorActor } from '../base/index.js';
import type { HandlersFor } from '../channel.js';
import type { TelemetryService } from './service.js';

export function telemetryChannels(telemetry: TelemetryService): HandlersFor<keyof typeof telemetryInvokeChannels> {
  return {
    'telemetry.series': (query) => telemetry.series.query(query),
    'cost.summary': (query) => telemetry.costSummary(query),
    'alerts.list': () => ({ alerts: telemetry.alerts.list(), baselines: telemetry.alerts.listBaselines() }),
    'alerts.setBaseline': ({ model, tokPerS }, ctx) => telemetry.setBaseline(model, tokPerS, 'manual', operatorActor(ctx.caller)),
  };
}
