// Operator changes to client tokens (create with limits, set class or limits):
// each checked by client-policy.ts before anything is written, and stored with
// its audit row (fields old → new) in one transaction, so a refused or failed
// write leaves neither.
import { DEFAULT_TOKEN_LIMITS, type TokenLimitsPatch, type TokenView, type TrafficClass } from '../../../src-preload/contract/index.js';
import { operatorActor, type Clock } from '../base/index.js';
import type { Config } from '../config/index.js';
import type { Store } from '../store/index.js';
import { applyPatch, limitsCatalog, limitsDiff } from './client-policy.js';
import type { TokenRepository } from './tokens.js';

export interface TokenAdminDeps {
  store: Pick<Store, 'atomically' | 'audit'>;
  tokens: TokenRepository;
  config: { readonly current: Config };
  clock: Clock;
}

export class TokenAdmin {
  constructor(private readonly deps: TokenAdminDeps) {}

  create(name: string, maxClass: TrafficClass, patch: TokenLimitsPatch | undefined, caller: string): { token: string; view: TokenView } {
    const { store, tokens, config, clock } = this.deps;
    const limits = applyPatch(name, DEFAULT_TOKEN_LIMITS, patch ?? {}, config.current.proxy.clients[name], limitsCatalog(config.current), clock.now());
    const set = limitsDiff(DEFAULT_TOKEN_LIMITS, limits);
    return store.atomically(`token "${name}"`, () => {
      const created = tokens.create(name, maxClass, limits);
      store.audit.append({
        type: 'proxy.token.created',
        actor: operatorActor(caller),
        target: name,
        payload: { maxClass, prefix: created.view.prefix, ...(Object.keys(set).length > 0 ? { limits: Object.fromEntries(Object.entries(set).map(([f, d]) => [f, d.to])) } : {}) },
      });
      return created;
    });
  }

  /** Changes what the patch names; a no-op change answers the view and writes nothing. */
  set(name: string, maxClass: TrafficClass | undefined, patch: TokenLimitsPatch, caller: string): TokenView {
    const { store, tokens, config, clock } = this.deps;
    return store.atomically(`token "${name}"`, () => {
      const before = tokens.stored(name);
      const limits = applyPatch(name, before.limits, patch, config.current.proxy.clients[name], limitsCatalog(config.current), clock.now());
      const changes: Record<string, { from: unknown; to: unknown }> = { ...limitsDiff(before.limits, limits) };
      const cls = maxClass ?? before.maxClass;
      if (cls !== before.maxClass) changes['maxClass'] = { from: before.maxClass, to: cls };
      if (Object.keys(changes).length === 0) return tokens.list().find((t) => t.name === name && t.revokedAt === null)!;
      const view = tokens.update(name, cls, limits);
      store.audit.append({ type: 'proxy.token.changed', actor: operatorActor(caller), target: name, payload: { prefix: view.prefix, changes } });
      return view;
    });
  }
}
