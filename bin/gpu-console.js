#!/usr/bin/env node
// Entry of the `gpu-console` command: runs the built CLI (out/main/cli.js).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const built = new URL('../out/main/cli.js', import.meta.url);
if (!existsSync(fileURLToPath(built))) {
  process.stderr.write('gpu-console: not built yet — run `npm run build` (npm start builds automatically)\n');
  process.exit(2);
}
await import(built.href);
