// Builds the ssh capability's services for the app and registers their
// lifetimes and events. Called once from app.ts, before fleet.start().
//
// Persistence: operator-confirmed host keys live in the `settings` table under
// `ssh.trustedHostKeys` (next to, never instead of, ~/.ssh/known_hosts).
// Passphrases live in this process's memory only. Imported ~/.ssh/config hosts
// are written into the YAML config file (the one inventory) and reloaded.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { userInfo } from 'node:os';
import type { HostConnectionState, SshConfigApplyResult, SshConfigPreview, SshConfigSource, TunnelTestResult } from '../../../src-preload/contract/index.js';
import { AppError, toDisposable, type AppError as AppErrorType } from '../base/index.js';
import {
  KeyValueTrustStore,
  knownHostsName,
  MemoryPassphraseCache,
  SshErrorCode,
  importSshConfig,
  loadSshConfigTree,
  mergeHostsIntoYaml,
  readConfigText,
  writeFileAtomically,
  type ImportedHost,
  type SshConfigIssue,
  type SshConfigLine,
} from '../ssh/index.js';
import { FleetErrorCode } from '../fleet/index.js';
import type { AppContext } from '../app-context.js';

export interface ImportApplyOptions {
  /** The console runs the built-in demo fleet: the file is written but not loaded. */
  demo: boolean;
  reload(): Promise<AppErrorType | null>;
}

export interface SshWiring {
  reconnect(label: string, caller: string): Promise<HostConnectionState>;
  trust(label: string, fingerprint: string, caller: string): Promise<HostConnectionState>;
  refuse(label: string, fingerprint: string, caller: string): Promise<HostConnectionState>;
  /**
   * Drops the console's confirmation of a host key (the host was reinstalled): the operator names the
   * old fingerprint and types the host label; audited; the host reconnects and waits for the new key
   * to be confirmed like any unknown key. Keys in the user's known_hosts are never edited here.
   */
  forgetTrust(label: string, fingerprint: string, typedLabel: string, caller: string): Promise<HostConnectionState>;
  passphrase(label: string, passphrase: string, caller: string): Promise<HostConnectionState>;
  testTunnel(label: string, serviceId: string, caller: string): Promise<TunnelTestResult>;
  /** Null: the operator closed the file dialog. */
  importPreview(source: SshConfigSource, caller: string, signal?: AbortSignal): Promise<SshConfigPreview | null>;
  importApply(previewId: string, labels: readonly string[], caller: string, options: ImportApplyOptions): Promise<SshConfigApplyResult>;
}

function localUser(): string {
  try {
    return userInfo().username;
  } catch {
    return 'root';
  }
}

export async function wireSsh(ctx: AppContext): Promise<SshWiring> {
  const { fleet, store } = ctx;
  const trustStore = new KeyValueTrustStore(store.settings);
  const passphrases = new MemoryPassphraseCache();
  ctx.disposables.add(toDisposable(() => passphrases.clear()));
  fleet.configureSsh({ trustStore, passphrases });

  // Host-key events the sessions decide on their own: an unknown key (once per
  // key and host, not per click) and every refusal of a changed or revoked key.
  const seenUnknown = new Set<string>();
  ctx.disposables.add(
    fleet.onDidChangeHostState((change) => {
      const hk = change.hostKey;
      const code = change.error?.code;
      if (!hk || !code) return;
      if (code === SshErrorCode.HOST_KEY_UNKNOWN) {
        const key = `${change.label}|${hk.endpoint}|${hk.fingerprint}`;
        if (seenUnknown.has(key)) return;
        seenUnknown.add(key);
        store.audit.append({
          type: 'ssh.hostkey.unknown',
          actor: 'system',
          target: change.label,
          payload: { endpoint: hk.endpoint, role: hk.role, keyType: hk.keyType, fingerprint: hk.fingerprint },
        });
      } else if (code === SshErrorCode.HOST_KEY_CHANGED || code === SshErrorCode.HOST_KEY_REVOKED) {
        ctx.logger.error('HOST KEY CHANGED: refusing to connect', { label: change.label, endpoint: hk.endpoint, presented: hk.fingerprint, known: hk.knownFingerprints });
        store.audit.append({
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
    }),
  );

  const pending = (label: string) => {
    const view = fleet.snapshot().hosts.find((h) => h.label === label);
    return view?.hostKey ?? null;
  };

  // Previews kept for their apply: the apply writes exactly what the operator saw, and a file chosen in a
  // dialog is not asked for twice. Bounded; the oldest goes first.
  const PREVIEWS_KEPT = 8;
  const PREVIEW_TTL_MS = 30 * 60_000;
  const previews = new Map<string, { at: number; file: string; hosts: ImportedHost[] }>();

  const read = async (
    source: SshConfigSource,
    signal: AbortSignal | undefined,
  ): Promise<{ file: string; files: string[]; lines: SshConfigLine[] | string; issues: SshConfigIssue[] } | null> => {
    if (source.kind === 'content') return { file: `${source.name} (uploaded)`, files: [], lines: source.text, issues: [] };
    let path = join(ctx.home, '.ssh', 'config');
    if (source.kind === 'dialog') {
      const picker = ctx.options.filePicker;
      if (!picker) {
        throw new AppError(SshErrorCode.IMPORT_SOURCE_UNAVAILABLE, 'the headless console has no file dialog: choose the file in the browser (its content is uploaded)');
      }
      const chosen = await picker.chooseFile({ title: 'Import hosts from an SSH config', defaultPath: join(ctx.home, '.ssh', 'config'), signal });
      if (chosen === null) return null;
      path = chosen;
    }
    const loaded = await loadSshConfigTree(path, ctx.home, signal);
    return { file: path, files: loaded.files, lines: loaded.lines, issues: loaded.issues };
  };

  const preview = async (source: SshConfigSource, caller: string, signal?: AbortSignal): Promise<SshConfigPreview | null> => {
    const got = await read(source, signal);
    if (!got) return null;
    // What was read, by whom: the files' names, never their text.
    store.audit.append({
      type: 'hosts.import.previewed',
      actor: ctx.operatorActor(caller),
      target: got.file,
      payload: { source: source.kind, files: got.files, bytes: source.kind === 'content' ? Buffer.byteLength(source.text) : null },
    });
    const result = importSshConfig(got.lines, { home: ctx.home, localUser: localUser() }, got.issues);
    const existing = new Set(ctx.config.current.hosts.map((h) => h.label.toLowerCase()));
    const fromFile = await readConfigText(ctx.config.path).catch(() => null);
    if (fromFile) {
      for (const m of fromFile.matchAll(/^\s*-?\s*label:\s*["']?([A-Za-z0-9._-]+)/gm)) existing.add(m[1]!.toLowerCase());
    }
    const now = ctx.clock.now();
    for (const [id, p] of previews) if (now - p.at > PREVIEW_TTL_MS) previews.delete(id);
    while (previews.size >= PREVIEWS_KEPT) previews.delete(previews.keys().next().value!);
    const previewId = randomBytes(12).toString('base64url');
    previews.set(previewId, { at: now, file: got.file, hosts: result.hosts });
    return {
      previewId,
      file: got.file,
      files: got.files,
      hosts: result.hosts.map((h) => ({ ...h, notes: [...h.notes], exists: existing.has(h.label.toLowerCase()) })),
      skipped: result.skipped,
      issues: result.issues,
      configFile: ctx.config.path,
    };
  };

  return {
    reconnect: async (label, caller) => {
      store.audit.append({ type: 'host.reconnect', actor: ctx.operatorActor(caller), target: label, payload: {} });
      return fleet.reconnectNow(label);
    },

    trust: async (label, fingerprint, caller) => {
      const actor = ctx.operatorActor(caller);
      const hk = pending(label);
      try {
        const state = await fleet.trustHostKey(label, fingerprint, actor);
        store.audit.append({
          type: 'ssh.hostkey.trusted',
          actor,
          target: label,
          payload: { fingerprint, endpoint: hk?.endpoint ?? null, role: hk?.role ?? 'host', keyType: hk?.keyType ?? null, preTrusted: hk === null, stateAfter: state },
        });
        return state;
      } catch (err) {
        const e = err instanceof AppError ? err : new AppError('INTERNAL_ERROR', String(err));
        store.audit.append({
          type: 'ssh.hostkey.trust.rejected',
          actor,
          target: label,
          payload: { fingerprint, presentedFingerprint: hk?.fingerprint ?? null, code: e.code, message: e.message },
        });
        throw err;
      }
    },

    forgetTrust: async (label, fingerprint, typedLabel, caller) => {
      const host = ctx.config.current.hosts.find((h) => h.label === label);
      if (!host) throw new AppError(FleetErrorCode.UNKNOWN_HOST, `no host "${label}" in the inventory`, { details: { label } });
      if (typedLabel !== label) {
        throw new AppError(SshErrorCode.FORGET_MISMATCH, `type the host label "${label}" to forget its trusted key`, { details: { label } });
      }
      // The endpoint whose key was refused (a jump host's, when that is the one that changed), else the host's own.
      const problem = pending(label);
      const endpoint = problem && problem.knownSource === 'console' ? problem.endpoint : knownHostsName(host.ssh.host, host.ssh.port);
      const trusted = trustStore.lookup(endpoint);
      if (!trusted.some((t) => t.fingerprint === fingerprint)) {
        throw new AppError(
          SshErrorCode.FORGET_MISMATCH,
          trusted.length
            ? `${fingerprint} is not the key this console trusts for ${endpoint} (it trusts ${trusted.map((t) => t.fingerprint).join(', ')})`
            : `this console trusts no key for ${endpoint}; a key in known_hosts is removed with ssh-keygen -R`,
          { details: { label, endpoint, trusted: trusted.map((t) => t.fingerprint) } },
        );
      }
      trustStore.forget(endpoint);
      store.audit.append({
        type: 'ssh.hostkey.forgotten',
        actor: ctx.operatorActor(caller),
        target: label,
        payload: { endpoint, fingerprints: trusted.map((t) => t.fingerprint), presentedFingerprint: problem?.fingerprint ?? null },
      });
      return fleet.reconnectNow(label);
    },

    refuse: async (label, fingerprint, caller) => {
      const actor = ctx.operatorActor(caller);
      const hk = pending(label);
      const state = await fleet.refuseHostKey(label, fingerprint);
      store.audit.append({
        type: 'ssh.hostkey.refused',
        actor,
        target: label,
        payload: { fingerprint, endpoint: hk?.endpoint ?? null, role: hk?.role ?? null, keyType: hk?.keyType ?? null, outcome: 'refused' },
      });
      return state;
    },

    passphrase: async (label, passphrase, caller) => {
      const keyFile = fleet.hostConfig(label).ssh.identityFile ?? null;
      const state = await fleet.providePassphrase(label, passphrase);
      const after = fleet.snapshot().hosts.find((h) => h.label === label);
      // The value itself never leaves this function: not in the audit row, not in a log.
      store.audit.append({
        type: 'ssh.key.unlocked',
        actor: ctx.operatorActor(caller),
        target: label,
        payload: { keyFile, accepted: after?.credentialPrompt?.reason !== 'incorrect', stateAfter: state },
      });
      return state;
    },

    testTunnel: async (label, serviceId, caller) => {
      const result = await fleet.testTunnel(label, serviceId);
      store.audit.append({
        type: 'tunnel.test',
        actor: ctx.operatorActor(caller),
        target: `${label}/${serviceId}`,
        payload: {
          ok: result.ok,
          localUrl: result.localUrl,
          totalMs: result.totalMs,
          steps: result.steps.map((s) => ({ name: s.name, ok: s.ok, status: s.status, latencyMs: s.latencyMs })),
          error: result.error,
        },
      });
      return result;
    },

    importPreview: preview,

    importApply: async (previewId, labels, caller, options) => {
      const p = previews.get(previewId);
      if (!p || ctx.clock.now() - p.at > PREVIEW_TTL_MS) {
        throw new AppError(SshErrorCode.IMPORT_PREVIEW_UNKNOWN, 'this preview is no longer held (expired, or the console restarted): read the file again', {
          details: { previewId },
        });
      }
      const wanted = new Set(labels.map((l) => l.toLowerCase()));
      const unknown = labels.filter((l) => !p.hosts.some((h) => h.label.toLowerCase() === l.toLowerCase()));
      if (unknown.length > 0) {
        throw new AppError(SshErrorCode.CONFIG_UNSUPPORTED, `not in ${p.file}: ${unknown.join(', ')}`, { details: { unknown } });
      }
      const chosen = p.hosts.filter((h) => wanted.has(h.label.toLowerCase()));
      const existing = await readConfigText(ctx.config.path);
      const merged = mergeHostsIntoYaml(existing, chosen, { file: ctx.config.path, home: ctx.home });
      if (merged.added.length > 0) await writeFileAtomically(ctx.config.path, merged.text);
      let reloaded = false;
      let note: string | null = null;
      if (merged.added.length > 0) {
        if (options.demo) {
          note = `written to ${ctx.config.path}; the console runs the demo fleet — restart it without --demo to use these hosts`;
        } else {
          const error = await options.reload();
          reloaded = error === null;
          if (error) note = `written, but the reload failed: ${error.code}: ${error.message}`;
        }
      }
      store.audit.append({
        type: 'hosts.imported',
        actor: ctx.operatorActor(caller),
        target: ctx.config.path,
        payload: { source: p.file, added: merged.added, skipped: merged.skipped.map((s) => s.alias), reloaded },
      });
      return { configFile: ctx.config.path, added: merged.added, skipped: merged.skipped, reloaded, note };
    },
  };
}
