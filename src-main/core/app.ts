// Composition root: builds the services from options and config, wires their
// events into one stream for the bridges, and tears everything down in reverse
// dependency order (pollers and tunnels, demo fleet, then the database).
import { mkdirSync } from 'node:fs';
import { access } from 'node:fs/promises';
import { homedir, userInfo } from 'node:os';
import { join } from 'node:path';
import type { AppInfo, EventChannel, EventPayload, HostConnectionState } from '../../src-preload/contract/index.js';
import { AppError, DisposableStore, Emitter, systemClock, toAppError, toDisposable, type Clock, type Disposable, type Logger } from './base/index.js';
import type { AlertThresholds } from './alerts/index.js';
import { ConfigService, type Config } from './config/index.js';
import { startDemoFleet, type DemoFleet } from './demo/index.js';
import { FleetService } from './fleet/index.js';
import { openStore, type Store } from './store/index.js';
import type { AppContext } from './app-context.js';
import type { FilePicker, Notifier, PdfPrinter, SecretStore } from './ports.js';
import { NotificationRouter, hostTransitionNotification } from './notify/index.js';
import { FileSecretStore } from './secrets/index.js';
import { wireBench, type BenchWiring } from './wiring/bench.js';
import { wireLifecycle, type LifecycleWiring } from './wiring/lifecycle.js';
import { wireProxy, type ProxyWiring } from './wiring/proxy.js';
import { wireReport, type ReportWiring } from './wiring/report.js';
import { wireSsh, type SshWiring } from './wiring/ssh.js';
import { wireTelemetry, type TelemetryWiring } from './wiring/telemetry.js';

export interface AppOptions {
  mode: 'electron' | 'web';
  version: string;
  dataDir: string;
  /** A config file named by the operator; null means the default file if it exists, else the demo fleet. */
  configFile: string | null;
  /** Run the built-in demo fleet even when a config file exists. */
  demo: boolean;
  logger: Logger;
  clock?: Clock;
  home?: string;
  /** Path to an Electron-ABI better_sqlite3.node (desktop only). */
  sqliteNativeBinding?: string;
  demoOptions?: { timeScale?: number; decodeSpeedFactor?: number; traffic?: boolean };
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
}

export interface AppEvent<E extends EventChannel = EventChannel> {
  channel: E;
  payload: EventPayload<E>;
}

export interface App extends Disposable {
  readonly store: Store;
  readonly config: ConfigService;
  readonly fleet: FleetService;
  readonly demo: DemoFleet | null;
  readonly ssh: SshWiring;
  readonly proxy: ProxyWiring;
  readonly telemetry: TelemetryWiring;
  readonly lifecycle: LifecycleWiring;
  readonly bench: BenchWiring;
  readonly report: ReportWiring;
  operatorActor(caller: string): string;
  /** What needs the operator now: approvals waiting and alerts raised (tray, badges). */
  attention(): { pendingApprovals: number; activeAlerts: number };
  readonly notifications: NotificationRouter;
  /** Where secrets are kept (values never leave main). */
  readonly secrets: SecretStore;
  setDoNotDisturb(on: boolean, minutes: number | null, caller: string): void;
  /** A native notification was clicked: ask the UI to show its subject. */
  openRoute(route: string): void;
  info(): AppInfo;
  onEvent(listener: (event: AppEvent) => void): Disposable;
  connectHost(label: string, caller: string): Promise<HostConnectionState>;
  disconnectHost(label: string, caller: string): Promise<HostConnectionState>;
  /** Re-reads the config file; on failure the running config stays and the error is returned. */
  reloadConfig(): Promise<AppError | null>;
}

export const DEFAULT_CONFIG_NAME = 'config.yaml';

function operatorActor(caller: string): string {
  let user = 'unknown';
  try {
    user = userInfo().username;
  } catch {
    // No passwd entry (containers): keep "unknown" rather than failing the call.
  }
  return `operator:${user}@${caller}`;
}

export async function startApp(options: AppOptions): Promise<App> {
  const clock = options.clock ?? systemClock;
  const logger = options.logger;
  const home = options.home ?? homedir();
  const disposables = new DisposableStore();
  const events = new Emitter<AppEvent>();
  disposables.add(events);
  const emit = <E extends EventChannel>(channel: E, payload: EventPayload<E>) => events.fire({ channel, payload } as AppEvent);

  mkdirSync(options.dataDir, { recursive: true, mode: 0o700 });
  const startedAt = clock.now();

  try {
    const store = openStore({
      file: join(options.dataDir, 'gpu-console.db'),
      nativeBinding: options.sqliteNativeBinding,
      clock,
      logger: logger.child('store'),
    });
    disposables.add(toDisposable(() => store.close()));

    const configFile = options.configFile ?? join(options.dataDir, DEFAULT_CONFIG_NAME);
    const config = new ConfigService({ path: configFile, home });
    disposables.add(config);

    let demo: DemoFleet | null = null;
    const useDemo = options.demo || (options.configFile === null && !(await fileExists(configFile)));
    if (useDemo) {
      demo = await startDemoFleet({
        dir: join(options.dataDir, 'demo'),
        logger: logger.child('demo'),
        clock,
        ...options.demoOptions,
      });
      disposables.add(toDisposable(() => demo!.dispose()));
      config.replace(demo.config as Config);
    } else {
      const error = await config.reload();
      if (error) throw error;
    }

    const fleet = new FleetService({
      config: config.current,
      clock,
      logger: logger.child('fleet'),
      pollIntervalMs: options.pollIntervalMs ?? config.current.telemetry?.pollIntervalMs,
    });
    disposables.add(fleet);
    disposables.add(fleet.onDidTick((snapshot) => emit('fleet.tick', snapshot)));
    const notifications = new NotificationRouter({
      clock,
      deliver: (n) => options.notifier?.notify({ title: n.title, body: n.body, route: n.route }),
    });
    const lastHostState = new Map<string, HostConnectionState>();
    disposables.add(
      fleet.onDidChangeHostState((change) => {
        emit('host.status', { label: change.label, state: change.state, message: change.message ?? null });
        const previous = lastHostState.get(change.label) ?? null;
        const input = hostTransitionNotification(change.label, previous, change.state, change.message ?? null);
        lastHostState.set(change.label, change.state);
        // Losing and regaining a session is evidence (availability in reports): audited on the edges only.
        if (previous === 'connected' && change.state !== 'connected') {
          store.audit.append({ type: 'host.connection.lost', actor: 'system', target: change.label, payload: { state: change.state, message: change.message ?? null } });
        } else if (previous !== null && previous !== 'connected' && change.state === 'connected') {
          store.audit.append({ type: 'host.connection.up', actor: 'system', target: change.label, payload: { state: change.state, after: previous } });
        }
        if (input) emit('notifications.notice', notifications.push(input));
      }),
    );
    disposables.add(
      config.onDidChange((next) => {
        fleet.applyConfig(next);
        emit('config.changed', { ok: true, error: null });
      }),
    );

    const secrets = options.secretStore ? options.secretStore(store) : new FileSecretStore(join(options.dataDir, 'secrets.json'));
    const ctx: AppContext = {
      options,
      secrets,
      store,
      config,
      fleet,
      clock,
      logger,
      home,
      disposables,
      emit,
      operatorActor,
      startedAt,
      notify: (input) => emit('notifications.notice', notifications.push(input)),
    };
    const telemetry = await wireTelemetry(ctx);
    const ssh = await wireSsh(ctx);
    const proxy = await wireProxy(ctx);
    telemetry.attachProxyStats(() => proxy.snapshot());
    const lifecycle = await wireLifecycle(ctx, proxy);
    const bench = await wireBench(ctx);
    const report = await wireReport(ctx, { telemetry, bench, lifecycle, pdf: options.pdfPrinter ?? null, demo: demo !== null });

    store.audit.append({
      type: 'console.started',
      actor: 'system',
      target: null,
      payload: { version: options.version, mode: options.mode, demo: demo !== null, configFile: demo ? null : configFile, pid: process.pid },
    });
    fleet.start();

    const app: App = {
      store,
      config,
      fleet,
      demo,
      ssh,
      proxy,
      telemetry,
      lifecycle,
      bench,
      report,
      operatorActor,
      attention: () => ({ pendingApprovals: lifecycle.pendingApprovals(), activeAlerts: telemetry.alerts.list().length }),
      notifications,
      secrets,
      openRoute: (route) => emit('notifications.open', { route }),
      setDoNotDisturb: (on, minutes, caller) => {
        notifications.setDoNotDisturb(on, on && minutes !== null ? clock.now() + minutes * 60_000 : null);
        store.audit.append({ type: 'notifications.dnd', actor: operatorActor(caller), target: null, payload: { on, minutes } });
      },
      info: () => ({
        name: 'GPU Console',
        version: options.version,
        mode: options.mode,
        demo: demo !== null,
        dataDir: options.dataDir,
        configFile: demo ? null : configFile,
        configError: config.lastError ? { code: config.lastError.code, message: config.lastError.message, retryable: false, details: config.lastError.details } : null,
        proxyUrl: proxy.url(),
        startedAt,
      }),
      onEvent: (listener) => events.on(listener),
      connectHost: async (label, caller) => {
        store.audit.append({ type: 'host.connect', actor: operatorActor(caller), target: label, payload: {} });
        return fleet.connect(label);
      },
      disconnectHost: async (label, caller) => {
        store.audit.append({ type: 'host.disconnect', actor: operatorActor(caller), target: label, payload: {} });
        return fleet.disconnect(label);
      },
      reloadConfig: async () => {
        if (demo) return new AppError('CONFIG_DEMO_MODE', 'the console runs the built-in demo fleet; start it with --config FILE to use a config file');
        const error = await config.reload();
        if (error) {
          store.audit.append({ type: 'config.reload.failed', actor: 'system', target: configFile, payload: { code: error.code, message: error.message } });
          emit('config.changed', { ok: false, error: { code: error.code, message: error.message, retryable: false, details: error.details } });
        } else {
          store.audit.append({ type: 'config.reloaded', actor: 'system', target: configFile, payload: { hosts: config.current.hosts.map((h) => h.label) } });
        }
        return error;
      },
      dispose: async () => {
        try {
          store.audit.append({ type: 'console.stopped', actor: 'system', target: null, payload: { pid: process.pid } });
        } catch (err) {
          logger.warn('could not record console.stopped', { error: toAppError(err).message });
        }
        await disposables.dispose();
      },
    };
    return app;
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
