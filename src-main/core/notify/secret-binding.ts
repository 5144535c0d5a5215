// Which secret a channel may send, and where. A channel made in the console
// owns exactly one secret, `notify.<its id>`, and that secret is bound to the
// destination it was given for (the channel's kind and its URL's origin): a
// caller who may edit channels cannot point one at another channel's secret,
// nor move a stored secret to a URL of their choosing without typing it again.
// config.yaml's channels name their own `notify.<name>`, but never one that a
// console channel owns.
import { createHash } from 'node:crypto';
import { AppError } from '../base/index.js';
import type { NotifyChannelConfig } from '../../../src-preload/contract/notify.js';
import { NotifyErrorCode } from './errors.js';

export const SECRET_PREFIX = 'notify.';

/** The one secret-store entry a console channel's secret lives in. */
export const ownSecretRef = (id: string): string => `${SECRET_PREFIX}${id}`;

/** The secret-store entry holding a console channel's URL (never a `secretRef`: the schema allows one segment after `notify.`). */
export const urlKey = (id: string): string => `${SECRET_PREFIX}${id}.url`;

/**
 * What a stored secret was given for: the kind (what the secret means) and the URL's origin (who receives
 * it). Kept in the settings table, so as a digest: a console channel's URL stays out of the database.
 */
export function bindingOf(kind: NotifyChannelConfig['kind'], url: string): string {
  let origin = '?';
  try {
    origin = new URL(url).origin;
  } catch {
    // An unparsable URL binds to nothing a real one matches.
  }
  return `${kind}:${createHash('sha256').update(origin).digest('hex')}`;
}

/** Whether a queued notice's channel is still the channel in force (an edit or a removal since makes it stale). */
export function sameChannel(a: NotifyChannelConfig, b: NotifyChannelConfig): boolean {
  return a === b || (a.id === b.id && a.kind === b.kind && a.url === b.url && a.secretRef === b.secretRef);
}

export function refForbidden(id: string, ref: string, why: string): AppError {
  return new AppError(NotifyErrorCode.SECRET_REF_FORBIDDEN, `channel.secretRef: ${ref} is not channel ${id}'s own secret (${why})`, {
    details: { field: 'channel.secretRef', id, ref },
  });
}

export function destinationChanged(id: string, kind: string): AppError {
  return new AppError(
    NotifyErrorCode.SECRET_DESTINATION_CHANGED,
    `secret: channel ${id}'s stored ${kind === 'webhook' ? 'signing key' : kind === 'zulip' ? 'API key' : 'token'} was given for another kind or host; give it again for the new one`,
    { details: { field: 'secret', id } },
  );
}

export function secretNotBound(id: string): AppError {
  return new AppError(NotifyErrorCode.SECRET_MISSING, `channel ${id} has no secret given for its destination: give it again in Notifications`, {
    details: { field: 'secret', id },
  });
}
