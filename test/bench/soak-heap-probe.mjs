// Loaded into the console under soak (node --import) by test/bench/soak.ts: writes
// process.memoryUsage() to $SOAK_HEAP_FILE every 2 s, so the soak reads the
// console's V8 heap from outside without a product endpoint for it. The timer
// is unref'd: it never holds the process open at shutdown.
import { renameSync, writeFileSync } from 'node:fs';

const file = process.env.SOAK_HEAP_FILE;
if (file) {
  const write = () => {
    try {
      const m = process.memoryUsage();
      writeFileSync(`${file}.tmp`, JSON.stringify({ pid: process.pid, atMs: Date.now(), rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external }));
      renameSync(`${file}.tmp`, file);
    } catch {
      // a full disk (the soak's own fault) must not disturb the console: the next write tries again
    }
  };
  setInterval(write, 2_000).unref();
  write();
}
