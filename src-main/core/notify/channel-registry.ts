// The outside channels in force: config.yaml's (the operator's file, read-only
// here) merged with those added in the console (kept in the settings store,
// key `notify.channels`); on an id clash config.yaml wins. A console channel's
// URL is kept in the secret store (`notify.<id>.url`: a Slack webhook's URL is
// its credential), never in the database. Saving and removing are audited with
// what changed, never the URL or a secret; a secret given with a save goes to
// the secret store and never comes back out.
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
import { NotifyErrorCode } from './errors.js';
import { maskUrl } from './mask-url.js';

export const CHANNELS_SETTING = 'notify.channels';
/** Where channels made in the console keep their secrets: never another capability's key. */
export const SECRET_PREFIX = 'notify.';

/** A channel made in the console (its URL apart), and whether its secret was stored by the console (then removing it deletes the secret). */
const StoredEntrySchema = z.object({ channel: z.record(z.string(), z.unknown()), ownsSecret: z.boolean() }).strict();
/** The secret-store entry holding a console channel's URL. */
export const urlKey = (id: string): string => `${SECRET_PREFIX}${id}.url`;
interface StoredEntry {
  channel: NotifyChannelConfig;
  ownsSecret: boolean;
}

export type NotifyChannelDraftParsed = z.output<typeof NotifyChannelDraftSchema>;

export interface NotifyChannelRegistryDeps {
  /** config.yaml's channels as they stand now (a reload changes them). */
  configChannels: () => readonly NotifyChannelConfig[];
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
    const fromConfig = this.deps.configChannels();
    const ids = new Set(fromConfig.map((c) => c.id));
    return [...fromConfig, ...this.ui.filter((e) => !ids.has(e.channel.id)).map((e) => e.channel)];
  }

  find(id: string): NotifyChannelConfig | undefined {
    return this.all().find((c) => c.id === id);
  }

  async list(): Promise<NotifyChannelView[]> {
    const configIds = new Set(this.deps.configChannels().map((c) => c.id));
    return Promise.all(this.all().map((c) => this.view(c, configIds.has(c.id) ? 'config' : 'ui')));
  }

  /** Adds or replaces a console channel. `url` left out keeps the stored one; the secret, when given, is stored under `secretRef`. */
  async save(draft: NotifyChannelDraftParsed, secret: string | undefined, caller: string): Promise<{ channel: NotifyChannelView; created: boolean }> {
    if (this.deps.configChannels().some((c) => c.id === draft.id)) {
      throw new AppError(NotifyErrorCode.CHANNEL_READ_ONLY, `channel ${draft.id} is from config.yaml: change it there`, { details: { id: draft.id, field: 'id' } });
    }
    const existing = this.ui.find((e) => e.channel.id === draft.id);
    const url = draft.url ?? existing?.channel.url;
    if (!url) throw invalid('url', 'a new channel needs its URL');
    if (draft.kind === 'slack' && secret !== undefined) throw invalid('secret', 'a Slack channel keeps its secret in the webhook URL: leave the secret empty');
    const needsRef = draft.kind === 'zulip' || draft.kind === 'webhook' || secret !== undefined;
    const secretRef = draft.secretRef ?? (needsRef ? (existing?.channel.secretRef ?? `${SECRET_PREFIX}${draft.id}`) : undefined);
    if (secretRef !== undefined && (!secretRef.startsWith(SECRET_PREFIX) || secretRef.endsWith('.url'))) {
      throw invalid('secretRef', `a channel made in the console keeps its secret under ${SECRET_PREFIX}<name> (not ending in .url), not ${secretRef}`);
    }
    const parsed = NotifyChannelConfigSchema.safeParse(stripUndefined({ ...draft, url, secretRef }));
    if (!parsed.success) {
      const issues = parsed.error.issues.slice(0, 5);
      throw new AppError(NotifyErrorCode.CHANNEL_INVALID, issues.map((i) => `channel.${i.path.join('.') || '(root)'}: ${i.message}`).join('; '), {
        details: { fields: issues.map((i) => i.path.join('.')) },
      });
    }
    const channel = parsed.data;
    if (channel.secretRef && secret === undefined && (channel.kind === 'zulip' || channel.kind === 'webhook') && (await this.deps.secrets.get(channel.secretRef)) === null) {
      throw new AppError(NotifyErrorCode.SECRET_MISSING, `secret: a ${channel.kind} channel needs its ${channel.kind === 'webhook' ? 'signing key' : 'API key'} (none is stored under ${channel.secretRef})`, {
        details: { field: 'secret', ref: channel.secretRef },
      });
    }
    // Secrets first: a channel must never be in force pointing at a secret that failed to store.
    if (secret !== undefined && channel.secretRef) await this.deps.secrets.set(channel.secretRef, secret);
    if (existing?.channel.url !== channel.url) await this.deps.secrets.set(urlKey(channel.id), channel.url);
    const ownsSecret = secret !== undefined || (existing?.ownsSecret === true && existing.channel.secretRef === channel.secretRef);
    const entry: StoredEntry = { channel, ownsSecret };
    const next = existing ? this.ui.map((e) => (e === existing ? entry : e)) : [...this.ui, entry];
    this.persist(next);
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
    const ref = existing.channel.secretRef;
    const stillUsed = ref !== undefined && this.all().some((c) => c.secretRef === ref);
    const deleteSecret = ref !== undefined && existing.ownsSecret && !stillUsed;
    if (deleteSecret) await this.deps.secrets.delete(ref);
    await this.deps.secrets.delete(urlKey(id));
    this.deps.audit.append({
      type: 'notifications.channel.removed',
      actor: operatorActor(caller),
      target: id,
      payload: { kind: existing.channel.kind, host: hostOf(existing.channel.url), ref: ref ?? null, deletedStoredValue: deleteSecret },
    });
    return { removed: true };
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
      hasSecret: c.secretRef ? (await this.deps.secrets.get(c.secretRef)) !== null : false,
      source,
    };
  }

  /**
   * The stored console channels. An entry whose URL is not in the secret store (a store that does not
   * persist) or that no longer passes the schema is kept as it is but not in force, and logged by id.
   */
  private async load(): Promise<void> {
    const raw = this.deps.settings.get<unknown>(CHANNELS_SETTING);
    if (raw === undefined) return;
    if (!Array.isArray(raw)) {
      this.deps.logger.warn('stored notification channels are not a list; ignored', { key: CHANNELS_SETTING });
      return;
    }
    for (const item of raw) {
      const entry = StoredEntrySchema.safeParse(item);
      const id = entry.success && typeof entry.data.channel.id === 'string' ? entry.data.channel.id : null;
      const url = id === null ? null : await this.deps.secrets.get(urlKey(id));
      const channel = entry.success && url !== null ? NotifyChannelConfigSchema.safeParse({ ...entry.data.channel, url }) : null;
      if (!entry.success || !channel?.success) {
        this.deps.logger.warn('a stored notification channel cannot be read back; not in force', {
          id,
          problem: url === null ? `no URL in the secret store under ${id === null ? '?' : urlKey(id)}` : channel && !channel.success ? describeIssues(channel.error) : 'malformed entry',
        });
        this.unreadable.push(item);
        continue;
      }
      this.ui.push({ channel: channel.data, ownsSecret: entry.data.ownsSecret });
    }
  }

  private persist(next: StoredEntry[]): void {
    const rows = next.map((e) => {
      const { url: _url, ...rest } = e.channel;
      return stripUndefined({ channel: rest, ownsSecret: e.ownsSecret });
    });
    this.deps.settings.set(CHANNELS_SETTING, [...rows, ...this.unreadable]);
    this.ui = next;
  }
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
