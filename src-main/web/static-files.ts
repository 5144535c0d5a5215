// The built renderer's files, as the web bridge serves them: only paths inside
// its folder, with the renderer's security headers; HTML is never cached.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BridgeErrorCode } from '../../src-preload/contract/index.js';
import { RENDERER_SECURITY_HEADERS, contentTypeFor, resolveStaticPath } from '../core/ui/index.js';
import { sendError } from './http-answers.js';

export async function serveStatic(rendererDir: string, req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> {
  const file = resolveStaticPath(rendererDir, url.pathname);
  if (!file) return sendError(res, 404, BridgeErrorCode.NOT_FOUND, 'not found');
  let size: number;
  try {
    const info = await stat(file);
    if (!info.isFile()) return sendError(res, 404, BridgeErrorCode.NOT_FOUND, 'not found');
    size = info.size;
  } catch {
    return sendError(res, 404, BridgeErrorCode.NOT_FOUND, 'not found');
  }
  res.writeHead(200, {
    ...RENDERER_SECURITY_HEADERS,
    'content-type': contentTypeFor(file),
    'content-length': size,
    'cache-control': file.endsWith('.html') ? 'no-store' : 'max-age=300',
  });
  if (req.method === 'HEAD') return void res.end();
  createReadStream(file).pipe(res);
}
