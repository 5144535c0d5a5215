import { isAbsolute, relative, resolve, sep } from 'node:path';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.map': 'application/json; charset=utf-8',
};

export function contentTypeFor(file: string): string {
  const dot = file.lastIndexOf('.');
  return (dot >= 0 && CONTENT_TYPES[file.slice(dot).toLowerCase()]) || 'application/octet-stream';
}

/**
 * Maps a URL path onto a file inside `root`, or null when the path tries to
 * leave it (`..`, encoded slashes or dots, backslashes, NUL, absolute paths).
 * `/` maps to index.html. The check is made on the decoded path and again on
 * the resolved file, so no encoding trick escapes the folder.
 */
export function resolveStaticPath(root: string, urlPath: string): string | null {
  const pathOnly = urlPath.split(/[?#]/, 1)[0] ?? '';
  // Encoded separators are refused outright rather than interpreted.
  if (/%2f|%5c|%00/i.test(pathOnly)) return null;
  let decoded: string;
  try {
    decoded = decodeURIComponent(pathOnly);
  } catch {
    return null;
  }
  if (decoded.includes('\0') || decoded.includes('\\')) return null;
  const segments = decoded.split('/').filter((s) => s.length > 0);
  if (segments.some((s) => s === '..' || s === '.')) return null;
  const rel = segments.length === 0 ? 'index.html' : segments.join('/');
  const base = resolve(root);
  const file = resolve(base, rel);
  const back = relative(base, file);
  if (back === '' || back.startsWith('..') || isAbsolute(back) || back.split(sep).includes('..')) return null;
  return file;
}
