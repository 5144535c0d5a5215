// Contract channels of the report capability (src-preload/contract/report.ts).
import type { reportInvokeChannels } from '../../../src-preload/contract/index.js';
import { operatorActor } from '../base/index.js';
import type { HandlersFor } from '../channel.js';
import type { ReportService } from './service.js';

export function reportChannels(reports: ReportService): HandlersFor<keyof typeof reportInvokeChannels> {
  return {
    'reports.preview': ({ request }, ctx) => reports.preview(request, operatorActor(ctx.caller), ctx.signal),
    'reports.export': ({ request, formats, sign, outDir }, ctx) => reports.export({ request, formats, sign, outDir, signal: ctx.signal }, operatorActor(ctx.caller)),
    'reports.list': ({ limit }) => ({ exports: reports.list(limit) }),
    'reports.verify': ({ dir }) => reports.verify(dir),
    'reports.gates': () => ({ gates: reports.gates() }),
    'reports.setGate': (mark, ctx) => reports.setGate(mark, operatorActor(ctx.caller)),
  };
}
