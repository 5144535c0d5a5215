// What a host session is to the code that uses it: its states, the options it
// takes, the SshSession face the fleet and tunnels depend on (so tests can fake
// it), and the host-key problem it reports when it stops on a key.
import type { Duplex } from 'node:stream';
import type { Client } from 'ssh2';
import type { HostKeyProblem } from '../../../src-preload/contract/index.js';
import type { HostConfig } from '../config/index.js';
import type { AppError, Clock, Disposable, Emitter, Logger } from '../base/index.js';
import { tcpDialer, type Dialer } from './dialer.js';
import type { ExecOptions, ExecResult } from './exec.js';
import type { ExecStream, ExecStreamOptions } from './exec-stream.js';
import { MemoryPassphraseCache, type PassphraseProvider } from './passphrases.js';
import type { RecoveryExpectation } from './recovery.js';
import { MemoryTrustStore, type HostKeyTrustStore } from './trust-store.js';

export type SshConnectionState = 'disconnected' | 'connecting' | 'awaiting-trust' | 'connected' | 'reconnecting' | 'failed';

export interface SshStateChange {
  state: SshConnectionState;
  error?: AppError;
  /** Epoch ms of the next automatic attempt (only in `reconnecting` while waiting). */
  nextRetryAt?: number;
}

/** What a session needs from the host inventory. */
export type SshHostTarget = Pick<HostConfig, 'label' | 'ssh' | 'knownHostsFile'>;

/** Creates the ssh2 client; tests inject their own. */
export type SshClientFactory = () => Client;

/** A host key the session saw and could not accept on its own (the contract's: the UI shows it as it is). */
export type { HostKeyProblem };

/** Shared services the sessions of one app read at each attempt (so the app may install them after building the fleet). */
export interface SshServices {
  trustStore: HostKeyTrustStore;
  passphrases: PassphraseProvider;
  dialer: Dialer;
}

export function defaultSshServices(): SshServices {
  return { trustStore: new MemoryTrustStore(), passphrases: new MemoryPassphraseCache(), dialer: tcpDialer() };
}

export interface SshConnectionOptions {
  clock?: Clock;
  logger?: Logger;
  /** Home folder for the default `~/.ssh/known_hosts`. */
  homeDir?: string;
  /** Where `SSH_AUTH_SOCK` is read from (default process.env). */
  env?: Readonly<Record<string, string | undefined>>;
  clientFactory?: SshClientFactory;
  /** Trust store, passphrases and dialer; read at every attempt. Default: in-memory ones and a TCP dialer on system DNS. */
  services?: Partial<SshServices>;
  /** Handshake + authentication deadline (per hop). Default 15 s. */
  readyTimeoutMs?: number;
  /** Unanswered keepalives before the link counts as lost. Default 2 (loss seen within about 3 intervals). */
  keepaliveCountMax?: number;
  backoff?: { initialMs?: number; maxMs?: number; random?: () => number };
  /** Transient failures (timeouts, resets, a dropped link) in a row after which a recovery is no longer expected. Default 3. */
  transientFailuresMax?: number;
  /** How long a new tunnel stream waits for a reconnect before failing. Default 5 s. */
  waitForConnectionMs?: number;
  /** Deadline for the host to answer a tunnel (direct-tcpip) request. Default 10 s. */
  channelOpenTimeoutMs?: number;
  /** Why this host got this transport (shown on the host). */
  transportWhy?: string;
}

/** Which transport a session runs on, for the host view. */
export interface SshTransportInfo {
  kind: 'builtin' | 'openssh';
  why: string;
  client: string | null;
  effective: Record<string, string> | null;
  /** How remote commands run, in words (a channel each; one remote shell; an `ssh` process each, and why). */
  commands?: string;
}

/** The part of a session the tunnels and pollers use; the fleet takes this so tests can fake it. */
export interface SshSession extends Disposable {
  readonly label: string;
  readonly state: SshConnectionState;
  readonly lastError: AppError | null;
  readonly nextRetryAt: number | null;
  /**
   * While down: whether the link is expected back by itself (its last failure's kind, failures in a row)
   * and when it is tried next; null while connected or disconnected (absent on test fakes).
   */
  readonly recovery?: RecoveryExpectation | null;
  readonly hostKeyFingerprint: string | null;
  /** The unknown/changed key the session stopped on, if any. */
  readonly hostKeyProblem?: HostKeyProblem | null;
  /** True while an ssh2 client (socket) exists: for leak checks. */
  readonly hasLiveClient: boolean;
  readonly onDidChangeState: Emitter<SshStateChange>['on'];
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  /** Drops the current link (if any) and tries at once, backoff reset; `reason` is the state change's error. */
  reconnectNow?(reason?: AppError): Promise<void>;
  /**
   * Milliseconds since the connected link last received a byte from the server (keepalive replies,
   * channel data); null when not connected. A link that is silent while requests go through it is dead.
   */
  silentForMs?(): number | null;
  /** A question the host asks while the session waits (keyboard-interactive, openssh transport); null when none. */
  readonly pendingPrompt?: { text: string; expiresAt: number } | null;
  /** Answers the pending prompt; false when there is none (it expired, or was answered). */
  answerPrompt?(answer: string): boolean;
  /** Declines the pending prompt: the login fails with that reason; false when there is none. */
  cancelPrompt?(): boolean;
  /** The transport and why it was chosen (absent on test fakes). */
  readonly transport?: SshTransportInfo;
  trustFingerprint(fingerprint: string, actor?: string): Promise<void>;
  /** The operator refused the key the session is waiting on: stop, and say so. */
  refuseTrust?(fingerprint: string): Promise<void>;
  exec(command: string, options?: ExecOptions): Promise<ExecResult>;
  /**
   * Runs a command as a stream (logs follow): output as it arrives, paused while the consumer lags,
   * closed (and the remote command's process group killed) on close() or the signal. Throws
   * SSH_NOT_CONNECTED when the session is not connected. Absent on test fakes that stream nothing.
   */
  execStream?(command: string, options?: ExecStreamOptions): ExecStream;
  forwardOut(srcIp: string, srcPort: number, dstHost: string, dstPort: number): Promise<Duplex>;
}
