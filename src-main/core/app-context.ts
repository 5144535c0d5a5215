import type { EventChannel, EventPayload } from '../../src-preload/contract/index.js';
import type { Clock, DisposableStore, Logger } from './base/index.js';
import type { ConfigService } from './config/index.js';
import type { FleetService } from './fleet/index.js';
import type { Store } from './store/index.js';
import type { AppOptions } from './app.js';
import type { SecretStore } from './ports.js';
import type { NotificationInput } from './notify/index.js';

/** What each capability's wiring (core/wiring/*) gets from the composition root. */
export interface AppContext {
  readonly options: AppOptions;
  readonly store: Store;
  readonly config: ConfigService;
  readonly fleet: FleetService;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly home: string;
  /** Upstream API keys, remembered passphrases, client tokens: never sent to the renderer. */
  readonly secrets: SecretStore;
  /** Everything created here is registered in it; disposed in reverse order at shutdown. */
  readonly disposables: DisposableStore;
  emit<E extends EventChannel>(channel: E, payload: EventPayload<E>): void;
  /** When the console started (ms epoch). */
  readonly startedAt: number;
  /** Tell the operator (native notification when allowed, and the in-app list). */
  notify(input: NotificationInput): void;
  /** `operator:<os user>@<transport>` for audit rows of operator actions. */
  operatorActor(caller: string): string;
}
