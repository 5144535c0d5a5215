// The outside channels in force: config.yaml's (the operator's file, read-only
// here) merged with those added in the console (kept in the settings store,
// key `notify.channels`); on an id clash config.yaml wins. A console channel's
// URL is kept in the secret store (`notify.<id>.url`: a Slack webhook's URL is
// its credential), never in the database. Saving and removing are audited with
// what changed, never the URL or a secret; a secret given with a save goes to
// the secret store and never comes back out. The registry is also the one that
// answers, per send, which secret a channel may use and where it may send
// (secret-binding.ts, destination.ts): a caller of the bridge chooses a console
// channel's URL, so that channel gets only the secret given for that URL.
import { z } from 'zod';
import { AppError, operatorActor, type Logger } from '../base/index.js';
import type { SecretStore } from '../ports.js';
import type { AuditLog, SettingsRepository } from '../store/index.js';
import {
  describeIssues,
  NotifyChannelConfigSchema,
  type NotifyChannelConfig,
  type NotifyChannelDraftSchema,
  type NotifyChannelView,
} from '../../../src-preload/contract/index.js';
import { destinationRefused, refusedUrlHost, type DestinationRule } from './destination.js';
import { NotifyErrorCode } from './errors.js';
import { maskUrl } from './mask-url.js';
import { bindingOf, destinationChanged, ownSecretRef, refForbidden, sameChannel, secretNotBound, urlKey } from './secret-binding.js';

export const CHANNELS_SETTING = 'notify.channels';
export { SECRET_PREFIX, urlKey, ownSecretRef } from './secret-binding.js';

/** A channel made in the console (its URL apart); whether the console stored its secret (then removing it deletes the secret); what that secret was given for. */
const StoredEntrySchema = z.object({ channel: z.record(z.string(), z.unknown()), ownsSecret: z.boolean(), secretFor: z.string().optional() }).strict();
interface StoredEntry {
  channel: NotifyChannelConfig;
  ownsSecret: boolean;
  /** bindingOf(kind, url) of the destination the stored secret was given for; absent: none was given for this channel. */
  secretFor?: string;
}

export type NotifyChannelDraftParsed = z.output<typeof NotifyChannelDraftSchema>;

export interface NotifyChannelRegistryDeps {
  /** config.yaml's channels as they stand now (a reload changes them). */
  configChannels: () => readonly NotifyChannelConfig[];
  /** config.yaml's `notifications.allowLoopback`: console channels may send to loopback (tests, receivers on this machine). */
  allowLoopback?: () => boolean;
  settings: SettingsRepository;
  secrets: SecretStore;
  audit: AuditLog;
  logger: Logger;
}

export class NotifyChannelRegistry {
  private ui: StoredEntry[] = [];
  /** Stored entries that could not be read back (no URL in the secret store, or a schema change): kept as they are, not in force. */
  private unreadable: unknown[] = [];

  private constructor(private readonly deps: NotifyChannelRegistryDeps) {}

  /** Reads the console's channels back (their URLs from the secret store). */
  static async open(deps: NotifyChannelRegistryDeps): Promise<NotifyChannelRegistry> {
    const reg = new NotifyChannelRegistry(deps);
    await reg.load();
    return reg;
  }

  /** Every channel in force: config.yaml's, then the console's whose id config.yaml does not use. */
  all(): NotifyChannelConfig[] {
    return [...this.deps.configChannels(), ...this.consoleInForce().map((e) => e.channel)];
  }

  find(id: string): NotifyChannelConfig | undefined {
    return this.all().find((c) => c.id === id);
  }

  async list(): Promise<NotifyChannelView[]> {
    const configIds = new Set(this.deps.configChannels().map((c) => c.id));
    return Promise.all(this.all().map((c) => this.view(c, configIds.has(c.id) ? 'config' : 'ui')));
  }

  /** Where a channel may send: config.yaml's anywhere (null); the console's not to loopback (unless allowed), link-local or metadata addresses. */
  destinationRule(c: NotifyChannelConfig): DestinationRule | null {
    if (this.isConfigChannel(c)) return null;
    return { allowLoopback: this.deps.allowLoopback?.() === true };
  }

  /**
   * The secret a channel may send now (null: it names none). Rejects with a code when the channel changed
   * since the notice was queued, names a secret that is not its own, or its secret was not given for its
   * current destination: the one check every outgoing secret passes, whatever stored the channel.
   */
  async secretFor(c: NotifyChannelConfig): Promise<string | null> {
    const current = this.find(c.id);
    if (!current || !sameChannel(current, c)) {
      throw new AppError(NotifyErrorCode.CHANNEL_CHANGED, `channel ${c.id} was changed or removed before this notice went out`, { details: { id: c.id } });
    }
    if (c.secretRef === undefined) return null;
    this.checkRef(c);
    return this.deps.secrets.get(c.secretRef);
  }

  /** Adds or replaces a console channel. `url` left out keeps the stored one; a secret, when given, is stored under `notify.<id>`. */
  async save(draft: NotifyChannelDraftParsed, secret: string | undefined, caller: string): Promise<{ channel: NotifyChannelView; created: boolean }> {
    const configs = this.deps.configChannels();
    if (configs.some((c) => c.id === draft.id)) {
      throw new AppError(NotifyErrorCode.CHANNEL_READ_ONLY, `channel ${draft.id} is from config.yaml: change it there`, { details: { id: draft.id, field: 'id' } });
    }
    const own = ownSecretRef(draft.id);
    if (draft.secretRef !== undefined && draft.secretRef !== own) throw refForbidden(draft.id, draft.secretRef, `a channel made in the console keeps its secret under ${own} only`);
    const namer = configs.find((c) => c.secretRef === own);
    if (namer) throw invalid('id', `config.yaml's channel ${namer.id} keeps its secret under ${own}: choose another id`);
    const existing = this.ui.find((e) => e.channel.id === draft.id);
    const url = draft.url ?? existing?.channel.url;
    if (!url) throw invalid('url', 'a new channel needs its URL');
    if (draft.kind === 'slack' && secret !== undefined) throw invalid('secret', 'a Slack channel keeps its secret in the webhook URL: leave the secret empty');
    const why = refusedUrlHost(url, { allowLoopback: this.deps.allowLoopback?.() === true });
    if (why) throw destinationRefused(url, why);
    const { secretRef, secretFor } = secretPlan(draft, existing, secret, bindingOf(draft.kind, url));
    const parsed = NotifyChannelConfigSchema.safeParse(stripUndefined({ ...draft, url, secretRef }));
    if (!parsed.success) {
      const issues = parsed.error.issues.slice(0, 5);
      throw new AppError(NotifyErrorCode.CHANNEL_INVALID, issues.map((i) => `channel.${i.path.join('.') || '(root)'}: ${i.message}`).join('; '), {
        details: { fields: issues.map((i) => i.path.join('.')) },
      });
    }
    const channel = parsed.data;
    // Secrets first: a channel must never be in force pointing at a secret that failed to store.
    if (secret !== undefined) await this.deps.secrets.set(own, secret);
    if (existing?.channel.url !== channel.url) await this.deps.secrets.set(urlKey(channel.id), channel.url);
    const entry: StoredEntry = stripUndefined({ channel, ownsSecret: secret !== undefined || existing?.ownsSecret === true, secretFor });
    const next = existing ? this.ui.map((e) => (e === existing ? entry : e)) : [...this.ui, entry];
    // The stored channel and its audit row land together or not at all (a kill or a failed write in between).
    this.deps.settings.atomically(() => {
      this.deps.audit.append({
        type: existing ? 'notifications.channel.updated' : 'notifications.channel.added',
        actor: operatorActor(caller),
        target: channel.id,
        payload: {
          kind: channel.kind,
          host: hostOf(channel.url),
          urlChanged: existing ? existing.channel.url !== channel.url : true,
          events: channel.events,
          minSeverity: channel.minSeverity,
          quietHours: channel.quietHours ?? null,
          enabled: channel.enabled,
          // The name of the secret-store entry, never its value; `storedNewValue` says whether one was given.
          ref: channel.secretRef ?? null,
          storedNewValue: secret !== undefined,
        },
      });
      this.persist(next);
    });
    return { channel: await this.view(channel, 'ui'), created: !existing };
  }

  async remove(id: string, caller: string): Promise<{ removed: boolean }> {
    if (this.deps.configChannels().some((c) => c.id === id)) {
      throw new AppError(NotifyErrorCode.CHANNEL_READ_ONLY, `channel ${id} is from config.yaml: remove it there`, { details: { id } });
    }
    const existing = this.ui.find((e) => e.channel.id === id);
    if (!existing) throw new AppError(NotifyErrorCode.CHANNEL_UNKNOWN, `no notification channel ${id}`, { details: { id } });
    const next = this.ui.filter((e) => e !== existing);
    this.persist(next);
    const own = ownSecretRef(id);
    const deleteSecret = existing.ownsSecret && !this.deps.configChannels().some((c) => c.secretRef === own);
    if (deleteSecret) await this.deps.secrets.delete(own);
    await this.deps.secrets.delete(urlKey(id));
    this.deps.audit.append({
      type: 'notifications.channel.removed',
      actor: operatorActor(caller),
      target: id,
      payload: { kind: existing.channel.kind, host: hostOf(existing.channel.url), ref: existing.channel.secretRef ?? null, deletedStoredValue: deleteSecret },
    });
    return { removed: true };
  }

  /** Throws unless `c` may use the secret it names (see secretFor). */
  private checkRef(c: NotifyChannelConfig): void {
    const ref = c.secretRef!;
    if (this.isConfigChannel(c)) {
      const owner = this.consoleInForce().find((e) => ownSecretRef(e.channel.id) === ref);
      if (owner) throw refForbidden(c.id, ref, `it belongs to channel ${owner.channel.id}, made in the console`);
      return;
    }
    if (ref !== ownSecretRef(c.id)) throw refForbidden(c.id, ref, `a channel made in the console uses ${ownSecretRef(c.id)} only`);
    const namer = this.deps.configChannels().find((x) => x.secretRef === ref);
    if (namer) throw refForbidden(c.id, ref, `config.yaml's channel ${namer.id} names it too`);
    if (this.ui.find((e) => e.channel.id === c.id)?.secretFor !== bindingOf(c.kind, c.url)) throw secretNotBound(c.id);
  }

  private isConfigChannel(c: NotifyChannelConfig): boolean {
    return this.deps.configChannels().some((x) => sameChannel(x, c));
  }

  private consoleInForce(): StoredEntry[] {
    const ids = new Set(this.deps.configChannels().map((c) => c.id));
    return this.ui.filter((e) => !ids.has(e.channel.id));
  }

  private async view(c: NotifyChannelConfig, source: NotifyChannelView['source']): Promise<NotifyChannelView> {
    return {
      id: c.id,
      kind: c.kind,
      host: hostOf(c.url),
      maskedUrl: maskUrl(c.kind, c.url),
      events: c.events,
      minSeverity: c.minSeverity,
      quietHours: c.quietHours ?? null,
      zulip: c.zulip ?? null,
      secretRef: c.secretRef ?? null,
      maxPerMinute: c.maxPerMinute,
      enabled: c.enabled,
      // "Stored" only when it would be sent: a secret this channel may not use reads as missing.
      hasSecret: c.secretRef !== undefined && this.mayUse(c) && (await this.deps.secrets.get(c.secretRef)) !== null,
      source,
    };
  }

  private mayUse(c: NotifyChannelConfig): boolean {
    try {
      this.checkRef(c);
      return true;
    } catch {
      return false;
    }
  }

  /**
   * The stored console channels. An entry whose URL is not in the secret store (a store that does not
   * persist) or that no longer passes the schema is kept as it is but not in force, and logged by id.
   * Entries from before secrets were bound are brought under the rule (bindLegacy).
   */
  private async load(): Promise<void> {
    const raw = this.deps.settings.get<unknown>(CHANNELS_SETTING);
    if (raw === undefined) return;
    if (!Array.isArray(raw)) {
      this.deps.logger.warn('stored notification channels are not a list; ignored', { key: CHANNELS_SETTING });
      return;
    }
    let rebound = false;
    for (const item of raw) {
      const entry = StoredEntrySchema.safeParse(item);
      const id = entry.success && typeof entry.data.channel.id === 'string' ? entry.data.channel.id : null;
      const url = id === null ? null : await this.deps.secrets.get(urlKey(id));
      const legacy = entry.success && id !== null && url !== null ? this.bindLegacy(id, entry.data, url) : null;
      const channel = legacy ? NotifyChannelConfigSchema.safeParse({ ...legacy.channel, url }) : null;
      if (!entry.success || !legacy || !channel?.success) {
        this.deps.logger.warn('a stored notification channel cannot be read back; not in force', {
          id,
          problem: url === null ? `no URL in the secret store under ${id === null ? '?' : urlKey(id)}` : channel && !channel.success ? describeIssues(channel.error) : 'malformed entry',
        });
        this.unreadable.push(item);
        continue;
      }
      rebound ||= legacy.changed;
      this.ui.push(stripUndefined({ channel: channel.data, ownsSecret: legacy.ownsSecret, secretFor: legacy.secretFor }));
    }
    if (rebound) this.persist(this.ui);
  }

  /**
   * An entry saved before secrets were bound: one naming its own `notify.<id>` keeps it, bound to the
   * destination it has now; one naming another secret (another channel's) is moved to its own name,
   * with nothing bound, so it sends nothing secret until its secret is given again. Audited.
   */
  private bindLegacy(id: string, e: z.output<typeof StoredEntrySchema>, url: string): { channel: Record<string, unknown>; ownsSecret: boolean; secretFor?: string; changed: boolean } {
    const ref = e.channel.secretRef;
    const own = ownSecretRef(id);
    if (ref === undefined || e.secretFor !== undefined) return { channel: e.channel, ownsSecret: e.ownsSecret, secretFor: e.secretFor, changed: false };
    if (ref === own) return { channel: e.channel, ownsSecret: e.ownsSecret, secretFor: bindingOf(e.channel.kind as NotifyChannelConfig['kind'], url), changed: true };
    this.deps.logger.warn('a stored notification channel named a secret that is not its own; it now uses its own, which must be given again', { id, from: String(ref), to: own });
    this.deps.audit.append({ type: 'notifications.channel.secret-rebound', actor: 'system', target: id, payload: { from: String(ref), to: own } });
    return { channel: { ...e.channel, secretRef: own }, ownsSecret: false, changed: true };
  }

  private persist(next: StoredEntry[]): void {
    const rows = next.map((e) => {
      const { url: _url, ...rest } = e.channel;
      return stripUndefined({ channel: rest, ownsSecret: e.ownsSecret, secretFor: e.secretFor });
    });
    this.deps.settings.set(CHANNELS_SETTING, [...rows, ...this.unreadable]);
    this.ui = next;
  }
}

/**
 * Which secret a saved console channel carries. A new one given is stored under `notify.<id>` and bound to
 * the channel's kind and URL origin; none given keeps the stored one only while kind and origin are those
 * it was given for. A secret stored under `notify.<id>` by other means (secrets.set) is never picked up by
 * a new channel: the channel's secret is the one given for it.
 */
function secretPlan(draft: NotifyChannelDraftParsed, existing: StoredEntry | undefined, secret: string | undefined, binding: string): { secretRef?: string; secretFor?: string } {
  const own = ownSecretRef(draft.id);
  if (draft.kind === 'slack') return {};
  if (secret !== undefined) return { secretRef: own, secretFor: binding };
  const stored = existing?.channel.secretRef !== undefined ? existing.secretFor : undefined;
  if (stored === binding) return { secretRef: own, secretFor: binding };
  if (stored !== undefined) throw destinationChanged(draft.id, draft.kind);
  if (draft.kind === 'ntfy') return {};
  throw new AppError(NotifyErrorCode.SECRET_MISSING, `secret: a ${draft.kind} channel needs its ${draft.kind === 'webhook' ? 'signing key' : 'API key'}, given here (it is kept under ${own})`, {
    details: { field: 'secret', ref: own },
  });
}

function invalid(field: string, message: string): AppError {
  return new AppError(NotifyErrorCode.CHANNEL_INVALID, `channel.${field}: ${message}`, { details: { fields: [field] } });
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
}

/** Settings take canonical JSON: keys holding undefined are dropped, not refused. */
function stripUndefined<T>(v: T): T {
  return JSON.parse(JSON.stringify(v)) as T;
}
