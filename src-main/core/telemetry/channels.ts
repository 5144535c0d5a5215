// Contract channels of telemetry and cost (src-preload/contract/telemetry.ts).
import type { telemetryInvokeChannels } from '../../../src-preload/contract/index.js';
import type { HandlersFor } from '../channel.js';
import type { TelemetryService } from './service.js';

export function telemetryChannels(telemetry: TelemetryService): HandlersFor<keyof typeof telemetryInvokeChannels> {
  return {
    'telemetry.series': (query) => telemetry.series.query(query),
    'cost.summary': (query) => telemetry.costSummary(query),
  };
}
