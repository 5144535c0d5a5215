// Stage: auth and class. Who is asking (a client token, or anonymous loopback
// when configured) and at which traffic class (X-Priority, at most the token's).
import type { IncomingHttpHeaders } from 'node:http';
import type { ProxyConfig } from '../../config/index.js';
import { allows, parsePriorityHeader, type TrafficClass } from '../classes.js';
import { wire, type Exchange } from '../exchange.js';
import type { TokenLimits } from '../../../../src-preload/contract/index.js';
import type { ClientLimits } from '../client-limits.js';
import type { TokenRepository } from '../tokens.js';
import { fail, ok, type StageResult } from './stage.js';

const NO_RETRY = Object.freeze({ 'x-should-retry': 'false' });

/**
 * Records the client and the class on `ex`; the class to queue at, or 401 missing_token /
 * invalid_token / token_revoked / token_expired, 400 invalid_priority, 403 class_not_allowed.
 */
export function authorize(
  ex: Exchange,
  headers: IncomingHttpHeaders,
  anon: ProxyConfig['anonymousLoopback'],
  tokens: TokenRepository,
  limits: ClientLimits | null = null,
): StageResult<TrafficClass> {
  const auth = authenticate(headers.authorization, anon, tokens);
  if (!auth.ok) return auth;
  ex.client = auth.value.name;
  ex.clientId = auth.value.id;
  // Named before the refusal, so an expired token's attempts count against it (its row carries token_expired).
  const entered = limits?.enter(ex, auth.value.limits);
  if (entered && !entered.ok) return entered;
  const maxClass = auth.value.maxClass;
  const wanted = parsePriorityHeader(headers['x-priority']);
  if (wanted === null) return fail(wire(400, 'invalid_priority', 'X-Priority must be one of: interactive, system, batch'));
  const cls = wanted ?? maxClass;
  ex.cls = cls;
  if (!allows(maxClass, cls)) {
    return fail(wire(403, 'class_not_allowed', `this token may send up to ${maxClass}, not ${cls}`, { headers: NO_RETRY }));
  }
  return ok(cls);
}

function authenticate(
  header: string | undefined,
  anon: ProxyConfig['anonymousLoopback'],
  tokens: TokenRepository,
): StageResult<{ id: string; name: string; maxClass: TrafficClass; limits?: TokenLimits }> {
  if (header === undefined || header.trim() === '') {
    if (anon.enabled) return ok({ id: 'anonymous', name: 'anonymous', maxClass: anon.class });
    return fail(wire(401, 'missing_token', 'send a token from `gpu-console tokens create NAME` as "Authorization: Bearer <token>"', { headers: NO_RETRY }));
  }
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!m) return fail(wire(401, 'invalid_token', 'the Authorization header must be "Bearer <token>"', { headers: NO_RETRY }));
  const check = tokens.check(m[1]!);
  if (check.ok) return ok(check);
  if (check.reason === 'revoked') return fail(wire(401, 'token_revoked', `the token "${check.name ?? ''}" was revoked`, { headers: NO_RETRY }));
  return fail(wire(401, 'invalid_token', 'unknown token', { headers: NO_RETRY }));
}
