// The operator's side of the fleet: connect and disconnect, host-key trust
// decisions, passphrases, tunnel tests and config reloads, each audited with
// who asked. Also what the sessions decide on their own (an unknown or changed
// host key, a session lost or back) becomes audit rows and notifications here.
//
// Persistence: operator-confirmed host keys live in the `settings` table under
// `ssh.trustedHostKeys` (next to, never instead of, ~/.ssh/known_hosts).
// Passphrases live in this process's memory only.
import type { HostConnectionState, TunnelTestResult } from '../../../src-preload/contract/index.js';
import { AppError, BaseErrorCode, DisposableStore, operatorActor, type Disposable, type Logger } from '../base/index.js';
import type { EventSink } from '../channel.js';
import { ConfigErrorCode, type ConfigService } from '../config/index.js';
import { hostTransitionNotification, type Notices } from '../notify/index.js';
import { SshErrorCode, knownHostsName, type HostKeyTrustStore } from '../ssh/index.js';
import type { Store } from '../store/index.js';
import { upstreamKey } from '../upstream/index.js';
import { FleetErrorCode } from './errors.js';
import type { FleetService } from './fleet-service.js';

export interface HostServiceDeps {
  fleet: FleetService;
  config: ConfigService;
  store: Store;
  trustStore: HostKeyTrustStore;
  notices: Notices;
  emit: EventSink;
  logger: Logger;
  /** Whether the running config is the file's (a reload reads it) or one the bridge handed over. */
  configSource: ConfigSource;
}

/**
 * Where the running config comes from: the config file, or a config the bridge
 * built and handed to the core (the demo fleet it started), which a reload of
 * the file must not replace; `reason` tells the operator so, and what to do.
 */
export type ConfigSource = { readonly fromFile: true } | { readonly fromFile: false; readonly reason: string };

export class HostService implements Disposable {
  private readonly disposables = new DisposableStore();
  private readonly seenUnknown = new Set<string>();
  private readonly lastState = new Map<string, HostConnectionState>();

  constructor(private readonly deps: HostServiceDeps) {
    const { fleet, config, emit } = deps;
    this.disposables.add(fleet.onDidChangeHostState((change) => this.onHostState(change)));
    // A reboot is evidence (an outage the session may not have noticed) and what a reboot alert keys on.
    this.disposables.add(
      fleet.onDidReboot((r) => this.audit.append({ type: 'host.rebooted', actor: 'system', target: r.label, payload: { previousBootId: r.previousBootId, bootId: r.bootId, uptimeS: r.uptimeS } })),
    );
    this.disposables.add(
      config.onDidChange((next) => {
        fleet.applyConfig(next);
        emit('config.changed', { ok: true, error: null });
      }),
    );
  }

  private get audit() {
    return this.deps.store.audit;
  }

  private onHostState(change: Parameters<Parameters<FleetService['onDidChangeHostState']>[0]>[0]): void {
    this.deps.emit('host.status', { label: change.label, state: change.state, message: change.message ?? null });
    const previous = this.lastState.get(change.label) ?? null;
    this.lastState.set(change.label, change.state);
    // Losing and regaining a session is evidence (availability in reports): audited on the edges only.
    // Evidence, not a gate: when the data folder is full (the store's health says so) the notice below still goes out.
    try {
      if (previous === 'connected' && change.state !== 'connected') {
        this.audit.append({ type: 'host.connection.lost', actor: 'system', target: change.label, payload: { state: change.state, message: change.message ?? null } });
      } else if (previous !== null && previous !== 'connected' && change.state === 'connected') {
        this.audit.append({ type: 'host.connection.up', actor: 'system', target: change.label, payload: { state: change.state, after: previous } });
      }
    } catch (err) {
      this.deps.logger.warn('host connection change not audited', { label: change.label, state: change.state, error: (err as Error).message });
    }
    const notice = hostTransitionNotification(change.label, previous, change.state, change.message ?? null);
    if (notice) this.deps.notices.notify(notice);

    // Host-key events the sessions decide on their own: an unknown key (once per key and host, not per
    // click) and every refusal of a changed or revoked key.
    const hk = change.hostKey;
    const code = change.error?.code;
    if (!hk || !code) return;
    if (code === SshErrorCode.HOST_KEY_UNKNOWN) {
      const key = `${change.label}|${hk.endpoint}|${hk.fingerprint}`;
      if (this.seenUnknown.has(key)) return;
      this.seenUnknown.add(key);
      this.audit.append({
        type: 'ssh.hostkey.unknown',
        actor: 'system',
        target: change.label,
        payload: { endpoint: hk.endpoint, role: hk.role, keyType: hk.keyType, fingerprint: hk.fingerprint },
      });
    } else if (code === SshErrorCode.HOST_KEY_CHANGED || code === SshErrorCode.HOST_KEY_REVOKED) {
      this.deps.logger.error('HOST KEY CHANGED: refusing to connect', { label: change.label, endpoint: hk.endpoint, presented: hk.fingerprint, known: hk.knownFingerprints });
      this.audit.append({
        type: code === SshErrorCode.HOST_KEY_CHANGED ? 'ssh.hostkey.changed' : 'ssh.hostkey.revoked',
        actor: 'system',
        target: change.label,
        payload: {
          endpoint: hk.endpoint,
          role: hk.role,
          keyType: hk.keyType,
          presentedFingerprint: hk.fingerprint,
          knownFingerprints: hk.knownFingerprints,
          knownSource: hk.knownSource,
          outcome: 'refused',
        },
      });
    }
  }

  private session(label: string) {
    return this.deps.fleet.state().hosts.find((h) => h.label === label)?.session ?? null;
  }

  private pending(label: string) {
    return this.session(label)?.trustProblem ?? null;
  }

  async connect(label: string, caller: string): Promise<HostConnectionState> {
    this.audit.append({ type: 'host.connect', actor: operatorActor(caller), target: label, payload: {} });
    return this.deps.fleet.connect(label);
  }

  async disconnect(label: string, caller: string): Promise<HostConnectionState> {
    this.audit.append({ type: 'host.disconnect', actor: operatorActor(caller), target: label, payload: {} });
    return this.deps.fleet.disconnect(label);
  }

  /** Drop the link (or the pending retry) and connect at once, backoff reset. */
  async reconnect(label: string, caller: string): Promise<HostConnectionState> {
    this.audit.append({ type: 'host.reconnect', actor: operatorActor(caller), target: label, payload: {} });
    return this.deps.fleet.reconnectNow(label);
  }

  async trust(label: string, fingerprint: string, caller: string): Promise<HostConnectionState> {
    const actor = operatorActor(caller);
    const hk = this.pending(label);
    try {
      const state = await this.deps.fleet.trustHostKey(label, fingerprint, actor);
      this.audit.append({
        type: 'ssh.hostkey.trusted',
        actor,
        target: label,
        payload: { fingerprint, endpoint: hk?.endpoint ?? null, role: hk?.role ?? 'host', keyType: hk?.keyType ?? null, preTrusted: hk === null, stateAfter: state },
      });
      return state;
    } catch (err) {
      const e = err instanceof AppError ? err : new AppError(BaseErrorCode.INTERNAL_ERROR, String(err));
      this.audit.append({
        type: 'ssh.hostkey.trust.rejected',
        actor,
        target: label,
        payload: { fingerprint, presentedFingerprint: hk?.fingerprint ?? null, code: e.code, message: e.message },
      });
      throw err;
    }
  }

  async refuse(label: string, fingerprint: string, caller: string): Promise<HostConnectionState> {
    const hk = this.pending(label);
    const state = await this.deps.fleet.refuseHostKey(label, fingerprint);
    this.audit.append({
      type: 'ssh.hostkey.refused',
      actor: operatorActor(caller),
      target: label,
      payload: { fingerprint, endpoint: hk?.endpoint ?? null, role: hk?.role ?? null, keyType: hk?.keyType ?? null, outcome: 'refused' },
    });
    return state;
  }

  /**
   * Drops the console's confirmation of a host key (the host was reinstalled): the operator names the
   * old fingerprint and types the host label; audited; the host reconnects and waits for the new key
   * to be confirmed like any unknown key. Keys in the user's known_hosts are never edited here.
   */
  async forgetTrust(label: string, fingerprint: string, typedLabel: string, caller: string): Promise<HostConnectionState> {
    const host = this.deps.config.current.hosts.find((h) => h.label === label);
    if (!host) throw new AppError(FleetErrorCode.UNKNOWN_HOST, `no host "${label}" in the inventory`, { details: { label } });
    if (typedLabel !== label) {
      throw new AppError(SshErrorCode.FORGET_MISMATCH, `type the host label "${label}" to forget its trusted key`, { details: { label } });
    }
    // The endpoint whose key was refused (a jump host's, when that is the one that changed), else the host's own.
    const problem = this.pending(label);
    const endpoint = problem && problem.knownSource === 'console' ? problem.endpoint : knownHostsName(host.ssh.host, host.ssh.port);
    const trusted = this.deps.trustStore.lookup(endpoint);
    if (!trusted.some((t) => t.fingerprint === fingerprint)) {
      throw new AppError(
        SshErrorCode.FORGET_MISMATCH,
        trusted.length
          ? `${fingerprint} is not the key this console trusts for ${endpoint} (it trusts ${trusted.map((t) => t.fingerprint).join(', ')})`
          : `this console trusts no key for ${endpoint}; a key in known_hosts is removed with ssh-keygen -R`,
        { details: { label, endpoint, trusted: trusted.map((t) => t.fingerprint) } },
      );
    }
    this.deps.trustStore.forget(endpoint);
    this.audit.append({
      type: 'ssh.hostkey.forgotten',
      actor: operatorActor(caller),
      target: label,
      payload: { endpoint, fingerprints: trusted.map((t) => t.fingerprint), presentedFingerprint: problem?.fingerprint ?? null },
    });
    return this.deps.fleet.reconnectNow(label);
  }

  /** The operator will not answer the host's question: the login fails saying so (audited with the question). */
  async declinePrompt(label: string, caller: string): Promise<HostConnectionState> {
    const asked = this.session(label)?.credentialPrompt;
    const state = await this.deps.fleet.declinePrompt(label);
    this.audit.append({ type: 'ssh.prompt.declined', actor: operatorActor(caller), target: label, payload: { prompt: asked?.kind === 'prompt' ? asked.text : null, stateAfter: state } });
    return state;
  }

  async passphrase(label: string, passphrase: string, caller: string): Promise<HostConnectionState> {
    const before = this.session(label)?.credentialPrompt;
    const keyFile = this.deps.fleet.hostConfig(label).ssh.identityFile ?? null;
    const state = await this.deps.fleet.providePassphrase(label, passphrase);
    const after = this.session(label);
    if (before?.kind === 'prompt') {
      // What the host asked is recorded; the answer is not.
      this.audit.append({ type: 'ssh.prompt.answered', actor: operatorActor(caller), target: label, payload: { prompt: before.text, stateAfter: state } });
      return state;
    }
    // The value itself never leaves this function: not in the audit row, not in a log.
    this.audit.append({
      type: 'ssh.key.unlocked',
      actor: operatorActor(caller),
      target: label,
      payload: { keyFile, accepted: !(after?.credentialPrompt?.kind === 'passphrase' && after.credentialPrompt.reason === 'incorrect'), stateAfter: state },
    });
    return state;
  }

  async testTunnel(label: string, serviceId: string, caller: string): Promise<TunnelTestResult> {
    const result = await this.deps.fleet.testTunnel(label, serviceId);
    this.audit.append({
      type: 'tunnel.test',
      actor: operatorActor(caller),
      target: upstreamKey(label, serviceId),
      payload: {
        ok: result.ok,
        localUrl: result.localUrl,
        totalMs: result.totalMs,
        steps: result.steps.map((s) => ({ name: s.name, ok: s.ok, status: s.status, latencyMs: s.latencyMs })),
        error: result.error,
      },
    });
    return result;
  }

  /** Re-reads the config file; on failure the running config stays and the error is returned. */
  async reloadConfig(): Promise<AppError | null> {
    const { config } = this.deps;
    const source = this.deps.configSource;
    if (!source.fromFile) return new AppError(ConfigErrorCode.DEMO_MODE, source.reason);
    const error = await config.reload();
    if (error) {
      this.audit.append({ type: 'config.reload.failed', actor: 'system', target: config.path, payload: { code: error.code, message: error.message } });
      this.deps.emit('config.changed', { ok: false, error: { code: error.code, message: error.message, retryable: false, details: error.details } });
    } else {
      this.audit.append({ type: 'config.reloaded', actor: 'system', target: config.path, payload: { hosts: config.current.hosts.map((h) => h.label) } });
    }
    return error;
  }

  dispose(): Promise<void> {
    return this.disposables.dispose();
  }
}
