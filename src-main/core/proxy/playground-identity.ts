// How the playground authenticates at the proxy without a stored secret: a
// bearer token drawn at random when the process starts, held only in main's
// memory (never written, logged, audited or sent to the renderer), that the
// proxy's token check recognises as the internal client `console:playground`.
// It dies with the process, so there is nothing to revoke or to leak from disk;
// its name cannot be an operator token's (TokenNameSchema has no ':'), so its
// rows and counts never mix with a real client's.
import { randomBytes } from 'node:crypto';
import type { TokenCheck, TokenRepository } from './tokens.js';

export const PLAYGROUND_CLIENT = 'console:playground';
/** The token's identity for per-client state (never a token hash: those are 64 hex digits). */
export const PLAYGROUND_CLIENT_ID = 'internal:playground';

export class PlaygroundIdentity {
  /** `Authorization` for the playground's requests; main-only. */
  readonly authorization: string;
  private readonly token: string;
  private readonly accepted: TokenCheck;

  constructor(random: (bytes: number) => Buffer = randomBytes) {
    // A prefix no stored token has (those start gcp_), so a leaked log line could never be mistaken for one.
    this.token = 'gci_' + random(32).toString('base64url');
    this.authorization = `Bearer ${this.token}`;
    // The highest class: the operator picks the class per request, as X-Priority.
    this.accepted = { ok: true, id: PLAYGROUND_CLIENT_ID, name: PLAYGROUND_CLIENT, maxClass: 'interactive' };
  }

  /**
   * The proxy's token check with this identity recognised first; everything else as `tokens` says
   * (a Proxy, so that whatever the repository grows reaches the proxy unchanged).
   */
  over(tokens: TokenRepository): TokenRepository {
    const { token, accepted } = this;
    // A string compare on loopback: the token map in tokens.ts answers by Map lookup just the same.
    const check = (presented: string): TokenCheck => (presented === token ? accepted : tokens.check(presented));
    return new Proxy(tokens, {
      get(target, prop) {
        if (prop === 'check') return check;
        const value: unknown = Reflect.get(target, prop, target);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
  }
}
