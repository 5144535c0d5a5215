// The demo fleet and a core on it, started the way the bridges start them
// (cli/serve.ts, shell/main.ts): the fleet first, in <dataDir>/demo, then
// startApp on the config the fleet hands over (validated as a config file's
// would be), then, when asked, the fleet's background traffic, half of it
// through the console's proxy. Core knows nothing of the demo (issue #28
// item 3); tests reach the simulators through `demo`.
import { startDemoFleet, DEMO_CONFIG_REASON, type DemoFleet, type DemoFleetOptions } from '../../src-main/demo/index.js';
import { startTestApp, type TestApp, type TestAppOptions } from './app.js';

export type DemoConsoleOptions = Omit<TestAppOptions, 'configFile' | 'givenConfig'> & {
  /** The file reloads would read (they are refused while the demo runs) and imports write to; default <dataDir>/config.yaml. */
  configFile?: string | null;
  /** The fleet's options (not its folder); `traffic`: background traffic, half through the proxy (default off). */
  fleet?: Omit<DemoFleetOptions, 'dir' | 'traffic'> & { traffic?: boolean };
};

export interface DemoConsole extends TestApp {
  demo: DemoFleet;
}

export async function startDemoConsole(options: DemoConsoleOptions): Promise<DemoConsole> {
  const { fleet = {}, configFile = null, ...appOptions } = options;
  const { traffic = false, ...fleetOptions } = fleet;
  const demo = await startDemoFleet({ dir: `${options.dataDir}/demo`, ...fleetOptions });
  let started: TestApp | undefined;
  try {
    started = await startTestApp({ ...appOptions, configFile, givenConfig: { config: demo.config, reason: DEMO_CONFIG_REASON } });
    if (traffic) await demo.startTrafficThrough(started.app.proxy);
  } catch (err) {
    await started?.dispose();
    await demo.dispose();
    throw err;
  }
  const core = started;
  let disposed = false;
  return {
    ...core,
    demo,
    /** The dispatcher and the core, then the fleet; harmless twice. The data folder is the caller's to remove. */
    async dispose() {
      if (disposed) return;
      disposed = true;
      try {
        await core.dispose();
      } finally {
        await demo.dispose();
      }
    },
  };
}
