#!/usr/bin/env node
// Entry of the `gpu-console` command: runs the built CLI (out/main/cli.js).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';

// The proxy's per-request objects are short-lived, but V8's allocation-site
// pretenuring learns to put them straight into the old generation, which
// makes every minor GC several times longer (test/bench/proxy-overhead.ts:
// c=1 added p99 ≈ 2–2.7 ms with it, 0.7–1.2 ms without). Set before the app
// loads; the Electron main process does the same (src-main/shell/main.ts).
setFlagsFromString('--no-allocation-site-pretenuring');
// Old-generation growth: by default V8 lets the heap grow to ~2–3 × what is
// live before a full GC, so a 64-host fleet's console swung between 394 and
// 538 MB RSS (test/bench/demo-scale.ts). Growing 30 % past live between full
// GCs held it at 335–368 MB for ~5 % of one core more (18.6 → 24 %). Same in
// the Electron main process (src-main/shell/main.ts).
setFlagsFromString('--heap-growing-percent=30');

const built = new URL('../out/main/cli.js', import.meta.url);
if (!existsSync(fileURLToPath(built))) {
  process.stderr.write('gpu-console: not built yet — run `npm run build` (npm start builds automatically)\n');
  process.exit(2);
}
await import(built.href);
