// Composition root: builds each capability's service in dependency order,
// hands each what it needs through its constructor, gathers the contract
// channels they implement into one table, and disposes everything in reverse
// (pollers and policies, proxy, tunnels and sessions, database). The demo
// fleet is no part of it: a bridge starts it and hands over its config.
// No behaviour lives here: rules, audit rows and events belong to the services.
import { access } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { AppInfo, EventChannel, EventPayload, InvokeChannel } from '../../src-preload/contract/index.js';
import type { AlertThresholds } from './alerts/index.js';
import { DisposableStore, Emitter, createOffPremCounter, systemClock, toAppError, toDisposable, AppError, type Clock, type Disposable, type Logger } from './base/index.js';
import { ConsoleBench, benchChannels } from './bench/index.js';
import type { EventSink, HandlersFor } from './channel.js';
import { ConfigSchema, ConfigService, type ConfigInput } from './config/index.js';
import { FleetService, HostService, SshConfigImportService, fleetChannels, type ConfigSource } from './fleet/index.js';
import { prepareDataDir, recordConsoleStarted, recordConsoleStopped } from './instance/index.js';
import { ConsoleLifecycle, StoredWakeEstimates, lifecycleChannels, lifecycleTargets, policySettings } from './lifecycle/index.js';
import { DeliveryDispatcher, DeliveryLog, NotificationService, NotifyChannelRegistry, NotifyErrorCode, notifyChannels } from './notify/index.js';
import type { FilePicker, Notifier, PdfPrinter, SecretStore } from './ports.js';
import { ProxyService, proxyChannels, requestWindows } from './proxy/index.js';
import { createConsoleReport, reportChannels, type ReportService } from './report/index.js';
import { FileSecretStore, secretsChannels } from './secrets/index.js';
import { KeyValueTrustStore, MemoryPassphraseCache } from './ssh/index.js';
import { auditChannels, openStore, verifyAudit, type Store } from './store/index.js';
import { TelemetryService, telemetryChannels } from './telemetry/index.js';
import { BudgetService, budgetChannels } from './budget/index.js';

/** When the console checks its audit chain by itself (besides every `audit verify`). */
const AUDIT_FIRST_CHECK_MS = 30_000;
const AUDIT_CHECK_INTERVAL_MS = 6 * 3_600_000;

export interface AppOptions {
  mode: 'electron' | 'web';
  version: string;
  dataDir: string;
  /** The config file reloads read and imports write to; null: <dataDir>/config.yaml (absent: no hosts until one is written). */
  configFile: string | null;
  /**
   * A config the bridge built instead of the file's (the demo fleet it started), validated as the file
   * would be. The file is then not read, and a reload is refused with `reason`, in the operator's words.
   */
  givenConfig?: { config: ConfigInput; reason: string };
  logger: Logger;
  clock?: Clock;
  home?: string;
  /** Path to an Electron-ABI better_sqlite3.node (desktop only). */
  sqliteNativeBinding?: string;
  /** Overrides the poll interval from config (tests). */
  pollIntervalMs?: number;
  /** Where secrets are kept; default: a 0600 file in the data dir (headless). The desktop shell passes the keychain. */
  secretStore?: (store: Store) => SecretStore;
  /** Native notifications (desktop); headless, the browser shows them from the `notifications.notice` event. */
  notifier?: Notifier;
  /** Port of the local OpenAI-compatible proxy on 127.0.0.1 (0 = any free port); overrides config. */
  proxyPort?: number;
  /** Prints report HTML to PDF (Electron's printToPDF, or a headless Chromium); without one, PDF export is refused clearly. */
  pdfPrinter?: PdfPrinter | null;
  /** The desktop shell's native file dialog (the ssh-config import); headless, none. */
  filePicker?: FilePicker | null;
  /** Overrides alert timing (tests: raise within seconds instead of a minute). */
  alertThresholds?: Partial<AlertThresholds>;
  /**
   * A core for one `gpu-console` command while no console runs: the same services, channels, rules and
   * audit rows, but no SSH session started and the proxy on a free loopback port.
   */
  offline?: boolean;
}

export interface AppEvent<E extends EventChannel = EventChannel> {
  channel: E;
  payload: EventPayload<E>;
}

export interface App extends Disposable {
  readonly store: Store;
  readonly config: ConfigService;
  readonly fleet: FleetService;
  readonly hosts: HostService;
  readonly proxy: ProxyService;
  readonly telemetry: TelemetryService;
  readonly lifecycle: ConsoleLifecycle;
  readonly bench: ConsoleBench;
  readonly reports: ReportService;
  readonly notifications: NotificationService;
  /** Where secrets are kept (values never leave main). */
  readonly secrets: SecretStore;
  /** Every contract channel, implemented by the capability it belongs to. */
  readonly channels: HandlersFor<InvokeChannel>;
  /** What needs the operator now: approvals waiting and alerts raised (tray, badges). */
  attention(): { pendingApprovals: number; activeAlerts: number };
  /** A native notification was clicked: ask the UI to show its subject. */
  openRoute(route: string): void;
  info(): AppInfo;
  onEvent(listener: (event: AppEvent) => void): Disposable;
  /** Re-reads the config file; on failure the running config stays and the error is returned. */
  reloadConfig(): Promise<AppError | null>;
}

export const DEFAULT_CONFIG_NAME = 'config.yaml';

export async function startApp(options: AppOptions): Promise<App> {
  const clock = options.clock ?? systemClock;
  const logger = options.logger;
  const home = options.home ?? homedir();
  const disposables = new DisposableStore();
  const events = new Emitter<AppEvent>();
  disposables.add(events);
  const emit: EventSink = (channel, payload) => events.fire({ channel, payload } as AppEvent);

  prepareDataDir(options.dataDir, logger);
  const startedAt = clock.now();

  try {
    const store = openStore({ file: join(options.dataDir, 'gpu-console.db'), nativeBinding: options.sqliteNativeBinding, clock, logger: logger.child('store') });
    disposables.add(toDisposable(() => store.close()));

    const configFile = options.configFile ?? join(options.dataDir, DEFAULT_CONFIG_NAME);
    const config = disposables.add(new ConfigService({ path: configFile, home }));
    const configSource: ConfigSource = options.givenConfig && !options.offline ? { fromFile: false, reason: options.givenConfig.reason } : { fromFile: true };
    if (options.offline) {
      // A broken config must not stop a one-command core (audit verify, tokens): the error is kept in
      // config.lastError (app.info shows it) and the core runs on an empty inventory.
      config.replace(ConfigSchema.parse({}));
      if (await fileExists(configFile)) await config.reload();
    } else if (options.givenConfig) {
      config.replace(options.givenConfig.config);
    } else if (options.configFile !== null || (await fileExists(configFile))) {
      const error = await config.reload();
      if (error) throw error;
    }

    const trustStore = new KeyValueTrustStore(store.settings);
    const passphrases = new MemoryPassphraseCache();
    disposables.add(toDisposable(() => passphrases.clear()));
    // One counter of calls refused for leaving this machine (upstreams are the tunnels or loopback only).
    const offPrem = createOffPremCounter();
    const fleet = disposables.add(
      new FleetService({
        config: config.current,
        clock,
        logger: logger.child('fleet'),
        pollIntervalMs: options.pollIntervalMs ?? config.current.telemetry?.pollIntervalMs,
        sshServices: { trustStore, passphrases },
        offPrem,
        // Control sockets, generated ssh configs and the askpass helper of the openssh transport (0700).
        openssh: { controlDir: join(options.dataDir, 'ssh') },
        // The tunnels' private sockets (0700): the console's own callers reach the engines there, admin paths included.
        tunnelDir: join(options.dataDir, 'tunnels'),
      }),
    );
    const secrets = options.secretStore ? options.secretStore(store) : new FileSecretStore(join(options.dataDir, 'secrets.json'));
    const notifyLog = logger.child('notify');
    // config.yaml's channels and those added in the console (settings store); deliveries go to a bounded table.
    const notifyRegistry = await NotifyChannelRegistry.open({
      configChannels: () => config.current.notifications?.channels ?? [],
      allowLoopback: () => config.current.notifications?.allowLoopback === true,
      settings: store.settings,
      secrets,
      audit: store.audit,
      logger: notifyLog,
    });
    const deliveryLog = new DeliveryLog(store.db);
    const outbound = disposables.add(
      new DeliveryDispatcher({
        clock,
        channels: () => notifyRegistry.all(),
        // The registry decides which secret a channel may send, and where (channel-registry.ts).
        secret: (c) => notifyRegistry.secretFor(c),
        destination: (c) => notifyRegistry.destinationRule(c),
        // Rows carry no URL or secret (dispatcher.ts, delivery-log.ts).
        record: (d, n) => {
          deliveryLog.record(d, n);
          notifyLog.debug('delivery', { ...d });
        },
      }),
    );
    const notifications = new NotificationService({
      clock,
      audit: store.audit,
      emit,
      notifier: options.notifier ?? null,
      outbound,
      channels: {
        list: () => notifyRegistry.list(),
        test: (id, n) => {
          const c = notifyRegistry.find(id);
          if (!c) throw new AppError(NotifyErrorCode.CHANNEL_UNKNOWN, `no notification channel ${id}`);
          return outbound.test(c, n);
        },
        save: (draft, secret, caller) => notifyRegistry.save(draft, secret, caller),
        remove: (id, caller) => notifyRegistry.remove(id, caller),
      },
      deliveries: deliveryLog,
    });
    // The chain is checked on its own too: shortly after start, then every 6 hours; a break pages the on-call.
    const checkAudit = () => {
      try {
        verifyAudit(store, notifications);
      } catch (err) {
        logger.warn('audit verification could not run', { message: (err as Error).message });
      }
    };
    disposables.add(clock.setTimeout(checkAudit, AUDIT_FIRST_CHECK_MS));
    disposables.add(clock.setInterval(checkAudit, AUDIT_CHECK_INTERVAL_MS));
    const hosts = disposables.add(new HostService({ fleet, config, store, trustStore, notices: notifications, emit, logger: logger.child('hosts'), configSource }));
    const imports = new SshConfigImportService({
      config,
      audit: store.audit,
      clock,
      home,
      filePicker: options.filePicker ?? null,
      configSource,
      reload: () => hosts.reloadConfig(),
    });
    const wakeEstimates = new StoredWakeEstimates({ db: store.db, targets: () => lifecycleTargets(config.current), fleet });
    const proxy = disposables.add(
      await ProxyService.start({ store, config, fleet, secrets, wakeEstimates, emit, clock, logger: logger.child('proxy'), port: options.offline ? 0 : options.proxyPort, offPrem }),
    );
    const budget = disposables.add(new BudgetService({ settings: store.settings, audit: store.audit, config, fleet, notices: notifications, clock, logger: logger.child('budget') }));
    const telemetry = disposables.add(
      new TelemetryService({ store, config, fleet, proxy, requests: requestWindows(store.db), notices: notifications, emit, clock, logger, startedAt, alertThresholds: options.alertThresholds, budget }),
    );
    const lifecycle = disposables.add(new ConsoleLifecycle({ store, config, fleet, proxy, notices: notifications, emit, clock, logger: logger.child('lifecycle'), offPrem }));
    // Wake on request: a request to a sleeping model waits for one wake when a standing approval covers it.
    proxy.setWakeOnRequest({
      allowed: (upstream) =>
        policySettings(config.current, upstream).wakeOnDemand &&
        lifecycle.service.supports(upstream, 'wake') &&
        lifecycle.service.list(0).standing.some((s) => s.upstream === upstream && s.kind === 'wake' && s.revokedAt === null && s.expiresAt > clock.now()),
      request: (upstream) => lifecycle.policies.sleepingRequest(upstream),
    });
    const bench = disposables.add(new ConsoleBench({ store, config, fleet, proxy, baselines: telemetry, emit, clock, logger: logger.child('bench') }));
    const reports = createConsoleReport({
      offPrem,
      store,
      config,
      fleet,
      secrets,
      series: telemetry.series,
      cost: telemetry,
      bench,
      actions: lifecycle.service,
      pdf: options.pdfPrinter ?? null,
      emit,
      clock,
      logger: logger.child('report'),
      version: options.version,
      mode: options.mode,
      dataDir: options.dataDir,
      home,
    });

    const info = (): AppInfo => ({
      name: 'GPU Console',
      version: options.version,
      mode: options.mode,
      demo: config.current.fleet.simulated,
      dataDir: options.dataDir,
      configFile: configSource.fromFile ? configFile : null,
      configError: config.lastError ? { code: config.lastError.code, message: config.lastError.message, retryable: false, details: config.lastError.details } : null,
      proxyUrl: proxy.url(),
      startedAt,
    });
    const channels: HandlersFor<InvokeChannel> = {
      'app.info': () => info(),
      ...auditChannels(store, notifications),
      ...fleetChannels(fleet, hosts, imports),
      ...notifyChannels(notifications),
      ...secretsChannels(secrets, store.audit),
      ...telemetryChannels(telemetry),
      ...proxyChannels(proxy),
      ...lifecycleChannels(lifecycle),
      ...benchChannels(bench),
      ...reportChannels(reports),
      ...budgetChannels(budget),
    };

    if (!options.offline) {
      recordConsoleStarted(store.audit, { version: options.version, mode: options.mode, demo: config.current.fleet.simulated, configFile: configSource.fromFile ? configFile : null });
      fleet.start();
    }

    return {
      store,
      config,
      fleet,
      hosts,
      proxy,
      telemetry,
      lifecycle,
      bench,
      reports,
      notifications,
      secrets,
      channels,
      attention: () => ({ pendingApprovals: lifecycle.pendingApprovals(), activeAlerts: telemetry.alerts.list().length }),
      openRoute: (route) => notifications.open(route),
      info,
      onEvent: (listener) => events.on(listener),
      reloadConfig: () => hosts.reloadConfig(),
      dispose: async () => {
        try {
          if (!options.offline) recordConsoleStopped(store.audit);
        } catch (err) {
          logger.warn('could not record console.stopped', { error: toAppError(err).message });
        }
        await disposables.dispose();
      },
    };
  } catch (err) {
    await disposables.dispose().catch(() => undefined);
    throw toAppError(err);
  }
}

async function fileExists(file: string): Promise<boolean> {
  try {
    await access(file);
    return true;
  } catch {
    return false;
  }
}
