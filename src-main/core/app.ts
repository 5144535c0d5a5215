// Composition root: builds each capability's service in dependency order,
// hands each what it needs through its constructor, gathers the contract
// channels they implement into one table, and disposes everything in reverse
// (pollers and policies, proxy, tunnels and sessions, database). The demo
// fleet is no part of it: a bridge starts it and hands over its config.
// No behaviour lives here: rules, audit rows and events belong to the services;
// each service gets what it needs in its constructor (no setter called later).
import { access } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { AppInfo, EventChannel, EventPayload, InvokeChannel } from '../../src-preload/contract/index.js';
import type { AlertThresholds } from './alerts/index.js';
import { DisposableStore, Emitter, createOffPremCounter, systemClock, toAppError, toDisposable, type AppError, type Clock, type Disposable, type Logger, type OffPremCounter } from './base/index.js';
import { ConsoleBench, benchChannels } from './bench/index.js';
import type { EventSink, HandlersFor } from './channel.js';
import { ConfigSchema, ConfigService, type ConfigInput } from './config/index.js';
import { FleetService, HostService, SshConfigImportService, fleetChannels, type ConfigSource } from './fleet/index.js';
import { prepareDataDir, recordConsoleStarted, recordConsoleStopped } from './instance/index.js';
import { LogFollowEvents, LogsService, LogWatch, logsChannels } from './logs/index.js';
import { ConsoleLifecycle, StoredWakeEstimates, StoredWakePolicy, lifecycleChannels, lifecycleTargets } from './lifecycle/index.js';
import { openConsoleNotifications, notifyChannels, type NotificationService } from './notify/index.js';
import type { FilePicker, Notifier, PdfPrinter, SecretStore } from './ports.js';
import { PlaygroundIdentity, PlaygroundService, ProxyService, playgroundChannels, proxyChannels, requestWindows } from './proxy/index.js';
import { upstreamKey } from './upstream/index.js';
import { createConsoleReport, reportChannels, type ReportService } from './report/index.js';
import { FileSecretStore, secretsChannels } from './secrets/index.js';
import { KeyValueTrustStore, MemoryPassphraseCache } from './ssh/index.js';
import { auditChannels, openStore, publishStorageHealth, scheduleAuditChecks, storageChannels, type Store } from './store/index.js';
import { TelemetryService, telemetryChannels } from './telemetry/index.js';
import { AlertOps, alertsChannels } from './alerts/index.js';
import { BudgetService, budgetChannels } from './budget/index.js';
import { AdvisorService, advisorChannels, type AdvisorSettings } from './advisor/index.js';

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
  /** Overrides the parallelism advisor's window and thresholds (tests: judge within seconds instead of 15 minutes). */
  advisorSettings?: Partial<AdvisorSettings>;
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
  /** The alert book: acknowledgements, silences, what pages, a shift's history. */
  readonly alerts: AlertOps;
  readonly lifecycle: ConsoleLifecycle;
  readonly bench: ConsoleBench;
  readonly reports: ReportService;
  /** Service logs over SSH (never stored). */
  readonly logs: LogsService;
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

/** What every builder below gets: the options, the world and where to register what it makes. */
interface Ground {
  options: AppOptions;
  clock: Clock;
  logger: Logger;
  home: string;
  emit: EventSink;
  disposables: DisposableStore;
  store: Store;
  startedAt: number;
}

type Services = Omit<App, 'channels' | 'attention' | 'openRoute' | 'info' | 'onEvent' | 'reloadConfig' | 'dispose'> & {
  imports: SshConfigImportService;
  budget: BudgetService;
  advisor: AdvisorService;
  logFollows: LogFollowEvents;
  playground: PlaygroundService;
  configFile: string;
  configSource: ConfigSource;
};

export async function startApp(options: AppOptions): Promise<App> {
  const clock = options.clock ?? systemClock;
  const logger = options.logger;
  const disposables = new DisposableStore();
  const events = disposables.add(new Emitter<AppEvent>());
  const emit: EventSink = (channel, payload) => events.fire({ channel, payload } as AppEvent);

  prepareDataDir(options.dataDir, logger);
  const startedAt = clock.now();

  try {
    const store = openStore({ file: join(options.dataDir, 'gpu-console.db'), nativeBinding: options.sqliteNativeBinding, clock, logger: logger.child('store') });
    disposables.add(toDisposable(() => store.close()));
    disposables.add(publishStorageHealth(store, emit));
    const ground: Ground = { options, clock, logger, home: options.home ?? homedir(), emit, disposables, store, startedAt };
    const s = await buildServices(ground);
    const { config, configSource, configFile, fleet, lifecycle, telemetry } = s;

    const info = (): AppInfo => ({
      name: 'GPU Console',
      version: options.version,
      mode: options.mode,
      demo: config.current.fleet.simulated,
      dataDir: options.dataDir,
      configFile: configSource.fromFile ? configFile : null,
      configError: config.lastError ? { code: config.lastError.code, message: config.lastError.message, retryable: false, details: config.lastError.details } : null,
      proxyUrl: s.proxy.url(),
      startedAt,
    });
    const channels: HandlersFor<InvokeChannel> = {
      'app.info': () => info(),
      ...auditChannels(store, s.notifications),
      ...storageChannels(store),
      ...fleetChannels(fleet, s.hosts, s.imports),
      ...notifyChannels(s.notifications),
      ...secretsChannels(s.secrets, store.audit),
      ...telemetryChannels(telemetry),
      ...alertsChannels(s.alerts, { listBaselines: () => telemetry.alerts.listBaselines(), setBaseline: (model, tokPerS, concurrency, actor) => telemetry.setBaseline(model, tokPerS, 'manual', actor, { concurrency }) }),
      ...proxyChannels(s.proxy),
      ...lifecycleChannels(lifecycle),
      ...benchChannels(s.bench),
      ...reportChannels(s.reports),
      ...budgetChannels(s.budget),
      ...logsChannels(s.logs, s.logFollows),
      ...advisorChannels(s.advisor),
      ...playgroundChannels(s.playground),
    };

    if (!options.offline) {
      recordConsoleStarted(store.audit, { version: options.version, mode: options.mode, demo: config.current.fleet.simulated, configFile: configSource.fromFile ? configFile : null });
      fleet.start();
    }

    return {
      store,
      config,
      fleet,
      hosts: s.hosts,
      proxy: s.proxy,
      telemetry,
      alerts: s.alerts,
      lifecycle,
      bench: s.bench,
      reports: s.reports,
      logs: s.logs,
      notifications: s.notifications,
      secrets: s.secrets,
      channels,
      attention: () => ({ pendingApprovals: lifecycle.pendingApprovals(), activeAlerts: s.alerts.needingAttention() }),
      openRoute: (route) => s.notifications.open(route),
      info,
      onEvent: (listener) => events.on(listener),
      reloadConfig: () => s.hosts.reloadConfig(),
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

/** Every capability, each built once what it needs exists: config, fleet and notices, then the proxy and what reads it. */
async function buildServices(g: Ground): Promise<Services> {
  const { config, configFile, configSource } = await openConfig(g);
  const { fleet, offPrem, trustStore } = buildFleet(g, config);
  const { options, clock, logger, emit, disposables, store } = g;
  const secrets = options.secretStore ? options.secretStore(store) : new FileSecretStore(join(options.dataDir, 'secrets.json'));
  const { notifications, disposable } = await openConsoleNotifications({ store, config, secrets, notifier: options.notifier ?? null, emit, clock, logger: logger.child('notify') });
  disposables.add(disposable);
  disposables.add(scheduleAuditChecks(store, notifications, clock, logger));
  const hosts = disposables.add(new HostService({ fleet, config, store, trustStore, notices: notifications, emit, logger: logger.child('hosts'), configSource }));
  const imports = new SshConfigImportService({ config, audit: store.audit, clock, home: g.home, filePicker: options.filePicker ?? null, configSource, reload: () => hosts.reloadConfig() });
  const work = await buildWork(g, { config, fleet, offPrem, secrets, notifications });
  return { store, config, configFile, configSource, fleet, hosts, imports, secrets, notifications, ...work };
}

/** The config in force: the bridge's (demo), the file's, or an empty one for an offline command. */
async function openConfig(g: Ground): Promise<{ config: ConfigService; configFile: string; configSource: ConfigSource }> {
  const { options } = g;
  const configFile = options.configFile ?? join(options.dataDir, DEFAULT_CONFIG_NAME);
  const config = g.disposables.add(new ConfigService({ path: configFile, home: g.home }));
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
  return { config, configFile, configSource };
}

function buildFleet(g: Ground, config: ConfigService): { fleet: FleetService; offPrem: OffPremCounter; trustStore: KeyValueTrustStore } {
  const { options, clock, logger, disposables, store } = g;
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
      events: g.emit,
    }),
  );
  return { fleet, offPrem, trustStore };
}

/** The proxy (with lifecycle's wake policy, built first), then what reads it: budget, telemetry, lifecycle, bench, reports. */
async function buildWork(
  g: Ground,
  d: { config: ConfigService; fleet: FleetService; offPrem: OffPremCounter; secrets: SecretStore; notifications: NotificationService },
): Promise<Pick<Services, 'proxy' | 'budget' | 'advisor' | 'telemetry' | 'alerts' | 'lifecycle' | 'bench' | 'reports' | 'logs' | 'logFollows' | 'playground'>> {
  const { options, clock, logger, emit, disposables, store } = g;
  const { config, fleet, offPrem, secrets, notifications } = d;
  const wakeEstimates = new StoredWakeEstimates({ db: store.db, targets: () => lifecycleTargets(config.current), fleet });
  const wakePolicy = new StoredWakePolicy({ db: store.db, config: () => config.current, clock });
  // The playground's in-memory token, which the proxy's token check recognises (never stored).
  const playgroundIdentity = new PlaygroundIdentity();
  const proxy = disposables.add(
    await ProxyService.start({ store, config, fleet, secrets, wakeEstimates, wakePolicy, emit, clock, logger: logger.child('proxy'), port: options.offline ? 0 : options.proxyPort, offPrem, notices: notifications, playground: playgroundIdentity }),
  );
  // Recommendations only: it reads the proxy's answers and the fleet's rounds; a person applies its advice.
  const advisor = disposables.add(
    new AdvisorService({ proxy, fleet, settings: store.settings, audit: store.audit, emit, clock, logger: logger.child('advisor'), options: options.advisorSettings }),
  );
  const budget = disposables.add(new BudgetService({ settings: store.settings, audit: store.audit, config, fleet, notices: notifications, clock, logger: logger.child('budget') }));
  // The service's own upstream key is masked in its log lines besides the patterns every line gets.
  const logs = disposables.add(
    new LogsService({
      hosts: fleet,
      clock,
      logger: logger.child('logs'),
      secretsOf: async (label, id) => {
        const ref = config.current.proxy.upstreams[upstreamKey(label, id)]?.apiKeyRef;
        const value = ref ? await secrets.get(ref) : null;
        return value ? [value] : [];
      },
    }),
  );
  // Failure lines in services' logs, read a bounded tail at a time, become log_failure alerts.
  const logWatch = disposables.add(new LogWatch({ logs, fleet, config, clock, logger: logger.child('log-watch') }));
  const telemetry = disposables.add(
    new TelemetryService({ store, config, fleet, proxy, requests: requestWindows(store.db), notices: notifications, emit, clock, logger, startedAt: g.startedAt, alertThresholds: options.alertThresholds, budget, logFailures: logWatch }),
  );
  // The alert book pages for the engine's alerts (acknowledged, silenced and grouped ones stay quiet).
  const alerts = disposables.add(
    new AlertOps({ source: telemetry.alerts, audit: store.audit, settings: store.settings, notices: notifications, emit, clock, logger: logger.child('alerts'), config: () => config.current }),
  );
  const lifecycle = disposables.add(new ConsoleLifecycle({ store, config, fleet, proxy, notices: notifications, emit, clock, logger: logger.child('lifecycle'), offPrem }));
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
    logs,
    pdf: options.pdfPrinter ?? null,
    emit,
    clock,
    logger: logger.child('report'),
    version: options.version,
    mode: options.mode,
    dataDir: options.dataDir,
    home: g.home,
  });
  const logFollows = disposables.add(new LogFollowEvents({ logs, emit, clock }));
  const playground = disposables.add(new PlaygroundService({ proxy, identity: playgroundIdentity, emit, clock, logger: logger.child('playground') }));
  return { proxy, budget, advisor, telemetry, alerts, lifecycle, bench, reports, logs, logFollows, playground };
}

async function fileExists(file: string): Promise<boolean> {
  try {
    await access(file);
    return true;
  } catch {
    return false;
  }
}
