// The demo fleet and a core on it, started the way the bridges start them
// (cli/serve.ts, shell/main.ts): the fleet first, in <dataDir>/demo, then
// startApp on the config the fleet hands over (validated as a config file's
// would be), then, when asked, the fleet's background traffic, half of it
// through the console's proxy. Core knows nothing of the demo (issue #28
// item 3); tests reach the simulators through `demo`.
import { createApi, type Api } from '../../src-main/core/api.js';
import { startApp, type App, type AppOptions } from '../../src-main/core/app.js';
import { silentLogger } from '../../src-main/core/base/index.js';
import { startDemoFleet, DEMO_CONFIG_REASON, type DemoFleet, type DemoFleetOptions } from '../../src-main/demo/index.js';

export type DemoConsoleOptions = Omit<AppOptions, 'mode' | 'version' | 'logger' | 'configFile' | 'givenConfig'> &
  Partial<Pick<AppOptions, 'mode' | 'version' | 'logger'>> & {
    /** The file reloads would read (they are refused while the demo runs) and imports write to; default <dataDir>/config.yaml. */
    configFile?: string | null;
    /** The fleet's options (not its folder); `traffic`: background traffic, half through the proxy (default off). */
    fleet?: Omit<DemoFleetOptions, 'dir' | 'traffic'> & { traffic?: boolean };
  };

export interface DemoConsole {
  app: App;
  /** The contract's dispatcher over `app`, as the bridges call it. */
  api: Api;
  demo: DemoFleet;
  /** The dispatcher, the core, then the fleet; harmless twice. The data folder is the caller's to remove. */
  dispose(): Promise<void>;
}

export async function startDemoConsole(options: DemoConsoleOptions): Promise<DemoConsole> {
  const { fleet = {}, configFile = null, logger = silentLogger, ...appOptions } = options;
  const { traffic = false, ...fleetOptions } = fleet;
  const demo = await startDemoFleet({ dir: `${options.dataDir}/demo`, ...fleetOptions });
  let app: App | undefined;
  try {
    app = await startApp({ mode: 'web', version: 'test', ...appOptions, logger, configFile, givenConfig: { config: demo.config, reason: DEMO_CONFIG_REASON } });
    if (traffic) await demo.startTrafficThrough(app.proxy);
  } catch (err) {
    await app?.dispose();
    await demo.dispose();
    throw err;
  }
  const core = app;
  const api = createApi(core, logger);
  let disposed = false;
  return {
    app: core,
    api,
    demo,
    async dispose() {
      if (disposed) return;
      disposed = true;
      try {
        api.dispose();
        await core.dispose();
      } finally {
        await demo.dispose();
      }
    },
  };
}
