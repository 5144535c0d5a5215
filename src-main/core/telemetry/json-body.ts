/** JSON.parse that never throws: undefined for anything that is not JSON. */
export function parseJsonBody(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** A body that is plainly an HTML page (a login portal, a proxy's error page). */
export function looksLikeHtml(text: string): boolean {
  return /^\s*(<!doctype html|<html|<head|<body|<\?xml|<)/i.test(text.slice(0, 512));
}

export const finiteOrNull = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
