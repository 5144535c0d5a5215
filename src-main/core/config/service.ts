import { Emitter, type AppError, silentLogger, toAppError, type Disposable, type Logger } from '../base/index.js';
import { ConfigErrorCode } from './errors.js';
import { loadConfigFile, validateConfig } from './parse.js';
import { ConfigSchema, type Config, type ConfigInput } from './schema.js';

export interface ConfigServiceOptions {
  /** The config file reload() reads. */
  path: string;
  /** The user's home folder, for `~/` paths. */
  home: string;
  /** Config in force before the first reload; defaults to the empty config (no hosts). */
  initial?: Config;
  logger?: Logger;
}

/**
 * Holds the config in force. A reload that fails keeps the previous config
 * running and records the error: a typo in the file must not tear down tunnels.
 */
export class ConfigService implements Disposable {
  private config: Config;
  private error: AppError | null = null;
  private readonly changed = new Emitter<Config>();
  private readonly logger: Logger;
  private readonly home: string;
  private queue: Promise<unknown> = Promise.resolve();
  private disposed = false;

  readonly path: string;

  constructor(options: ConfigServiceOptions) {
    this.path = options.path;
    this.home = options.home;
    this.logger = options.logger ?? silentLogger;
    this.config = options.initial ?? ConfigSchema.parse({});
  }

  get current(): Config {
    return this.config;
  }

  /** The error of the last reload/replace, or null after a good one. */
  get lastError(): AppError | null {
    return this.error;
  }

  /** Fires with the new config after a reload or replace that changed it. */
  onDidChange(listener: (config: Config) => void): Disposable {
    return this.changed.on(listener);
  }

  /**
   * Re-reads the file. Resolves to null on success, or to the error (the
   * previous config stays current). Never rejects. Concurrent calls run in order.
   */
  reload(): Promise<AppError | null> {
    const run = this.queue.then(() => this.reloadNow());
    this.queue = run;
    return run;
  }

  /** Installs a config built in code (the demo fleet). Throws CONFIG_INVALID and keeps the old one if it is not valid. */
  replace(input: Config | ConfigInput): Config {
    const next = validateConfig(input, { home: this.home, source: '<in-memory config>' });
    this.install(next);
    return next;
  }

  dispose(): void {
    this.disposed = true;
    this.changed.dispose();
  }

  private async reloadNow(): Promise<AppError | null> {
    if (this.disposed) return null;
    try {
      const next = await loadConfigFile(this.path, { home: this.home });
      if (this.disposed) return null;
      this.install(next);
      return null;
    } catch (err) {
      const error = toAppError(err, ConfigErrorCode.UNREADABLE);
      this.error = error;
      this.logger.warn('config reload failed; keeping the previous config', { code: error.code, message: error.message });
      return error;
    }
  }

  private install(next: Config): void {
    this.error = null;
    // Both come out of the same schema, so key order matches and JSON text compares them.
    const same = JSON.stringify(next) === JSON.stringify(this.config);
    this.config = next;
    if (!same) this.changed.fire(next);
  }
}

/**
 * What the UI may see of a config. No config field holds a secret today (an
 * identityFile is a path, not a key); when passphrases or API keys are added,
 * list them here so they are masked, not merely relied on to be named like secrets.
 */
export function redactedView(config: Config): Config {
  const view = structuredClone(config);
  for (const host of view.hosts) {
    for (const mask of SECRET_FIELDS) mask(host);
  }
  return view;
}

/** Field maskers for secret values; empty until a secret-bearing field exists. */
const SECRET_FIELDS: ((host: Config['hosts'][number]) => void)[] = [];
