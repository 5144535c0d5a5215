// A core started in-process the way a test needs it: a data folder, a config
// file (or none), no bridge, and the contract's dispatcher over it (issue #28
// item 7: fifteen tests wrote this set-up out, each with every option of
// AppOptions, so a change to those options touched them all). The demo fleet
// and a core on it have their own starter (demo-console.ts).
import { createApi, type Api } from '../../src-main/core/api.js';
import { startApp, type App, type AppOptions } from '../../src-main/core/app.js';
import { silentLogger } from '../../src-main/core/base/index.js';

/** AppOptions with the tests' defaults: headless ('web'), version 'test', a silent logger. */
export type TestAppOptions = Omit<AppOptions, 'mode' | 'version' | 'logger'> & Partial<Pick<AppOptions, 'mode' | 'version' | 'logger'>>;

export interface TestApp {
  app: App;
  /** The contract's dispatcher over `app`, as the bridges call it. */
  api: Api;
  /** One channel through `api` (caller 'test'); a refusal throws an Error with the answer's message, code, retryable and details. */
  call<T = unknown>(channel: string, input: unknown): Promise<T>;
  /** The dispatcher, then the core; harmless twice. The data folder is the caller's to remove. */
  dispose(): Promise<void>;
}

export async function startTestApp(options: TestAppOptions): Promise<TestApp> {
  const logger = options.logger ?? silentLogger;
  const app = await startApp({ mode: 'web', version: 'test', ...options, logger });
  const api = createApi(app, logger);
  let disposed = false;
  return {
    app,
    api,
    async call<T>(channel: string, input: unknown): Promise<T> {
      const r = await api.invoke(channel, input, { caller: 'test' });
      if (!r.ok) throw Object.assign(new Error(r.error.message), r.error);
      return r.data as T;
    },
    async dispose() {
      if (disposed) return;
      disposed = true;
      api.dispose();
      await app.dispose();
    },
  };
}
