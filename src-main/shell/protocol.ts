// Serves the built renderer from app://renderer/… (never file://), with the
// same path checks and security headers as the web bridge.
import { readFile } from 'node:fs/promises';
import { protocol } from 'electron';
import { RENDERER_SECURITY_HEADERS, contentTypeFor, resolveStaticPath } from '../core/ui/index.js';

export const APP_SCHEME = 'app';
export const APP_ORIGIN = 'app://renderer';

/** Must run before the app is ready. */
export function registerAppScheme(): void {
  protocol.registerSchemesAsPrivileged([
    { scheme: APP_SCHEME, privileges: { standard: true, secure: true, supportFetchAPI: true, codeCache: true } },
  ]);
}

export function handleAppProtocol(rendererDir: string): void {
  protocol.handle(APP_SCHEME, async (request) => {
    const url = new URL(request.url);
    if (url.host !== 'renderer') return new Response('not found', { status: 404 });
    const file = resolveStaticPath(rendererDir, url.pathname);
    if (!file) return new Response('not found', { status: 404 });
    try {
      const body = await readFile(file);
      return new Response(body, { status: 200, headers: { ...RENDERER_SECURITY_HEADERS, 'content-type': contentTypeFor(file) } });
    } catch {
      return new Response('not found', { status: 404 });
    }
  });
}
