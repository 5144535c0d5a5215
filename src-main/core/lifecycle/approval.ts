// The approval rules: the nonce main issues with each proposal (compared in
// constant time; a replay is told apart from a wrong guess), the host label
// typed for destructive kinds, and who the approving operator is.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { userInfo } from 'node:os';
import type { ActionKind, ActionView } from '../../../src-preload/contract/index.js';
import { AppError } from '../base/index.js';
import { LifecycleErrorCode } from './errors.js';
import type { ActionRecord } from './repository.js';

/** Kinds that cost a reload or an outage: approving them also needs the host label typed. */
export const DESTRUCTIVE = new Set<ActionKind>(['restart', 'offload']);

/**
 * A fresh proposal nonce; default random 18 bytes, base64url, never starting
 * with `-`: the operator passes it as `--nonce VALUE`, and a value that starts
 * with a dash reads as an option (one nonce in 64 failed `actions reject` so).
 */
export function issueNonce(source?: () => string): string {
  if (source) return source();
  let nonce: string;
  do nonce = randomBytes(18).toString('base64url');
  while (nonce.startsWith('-'));
  return nonce;
}

/** The operator's OS account, from the injected source or the system. */
export function osUserOf(source?: () => string): string {
  return (source ?? defaultOsUser)();
}

/** How an operator appears as an audit actor: `operator:alice@web` (the OS user comes from the injected source). */
export const actorFor = (osUser: string, caller: string): string => `operator:${osUser}@${caller}`;

function defaultOsUser(): string {
  try {
    return userInfo().username;
  } catch {
    return 'unknown';
  }
}

const sameSecret = (a: string, b: string): boolean => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/** A decision (approve or reject) is allowed only on a proposal still waiting, with the nonce issued for it. */
export function checkDecision(rec: ActionRecord, nonce: string): ActionRecord {
  const id = rec.view.id;
  if (rec.view.state !== 'proposed') {
    if (sameSecret(nonce, rec.issuedNonce)) {
      throw new AppError(LifecycleErrorCode.NONCE_USED, `the nonce of ${id} was already used (the action is ${rec.view.state})`, { details: { id, state: rec.view.state } });
    }
    throw new AppError(LifecycleErrorCode.ALREADY_DECIDED, `${id} is ${rec.view.state}, not waiting for a decision`, { details: { id, state: rec.view.state } });
  }
  if (!sameSecret(nonce, rec.issuedNonce)) {
    throw new AppError(LifecycleErrorCode.BAD_NONCE, `the nonce does not match the one issued with ${id}; reload the proposal`, { details: { id } });
  }
  return rec;
}

/** Destructive proposals need the host label typed exactly. */
export function checkTypedLabel(view: ActionView, typedLabel: string | undefined): void {
  if (view.requiresTypedLabel && typedLabel !== view.label) {
    throw new AppError(LifecycleErrorCode.LABEL_MISMATCH, `${view.kind} needs the host label typed exactly: "${view.label}"`, {
      details: { id: view.id, expected: view.label.length },
    });
  }
}

/** A standing approval of a destructive kind needs the host label typed exactly. */
export function checkStandingLabel(kind: ActionKind, label: string, typedLabel: string | undefined): void {
  if (DESTRUCTIVE.has(kind) && typedLabel !== label) {
    throw new AppError(LifecycleErrorCode.LABEL_MISMATCH, `a standing ${kind} approval needs the host label typed exactly: "${label}"`);
  }
}
