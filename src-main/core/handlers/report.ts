// Contract handlers of the report capability (channels in src-preload/contract/report.ts).
import type { reportInvokeChannels } from '../../../src-preload/contract/index.js';
import type { App } from '../app.js';
import type { HandlersFor } from './types.js';

export function reportHandlers(app: App): HandlersFor<keyof typeof reportInvokeChannels> {
  const r = () => app.report.service;
  return {
    'reports.preview': ({ request }, ctx) => r().preview(request, app.operatorActor(ctx.caller)),
    'reports.export': ({ request, formats, sign, outDir }, ctx) => r().export({ request, formats, sign, outDir }, app.operatorActor(ctx.caller)),
    'reports.list': ({ limit }) => ({ exports: r().list(limit) }),
    'reports.verify': ({ dir }) => r().verify(dir),
    'reports.gates': () => ({ gates: r().gates() }),
    'reports.setGate': (mark, ctx) => r().setGate(mark, app.operatorActor(ctx.caller)),
  };
}
