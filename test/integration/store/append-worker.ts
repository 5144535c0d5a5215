// Child process for the concurrent-append test: appends N audit events to the
// given database file as fast as it can, starting at a shared wall-clock
// instant so that both processes really overlap, then exits 0 (or 1 with the error).
import { openStore } from '../../../src-main/core/store/index.js';
import { auditType } from '../../helpers/audit-types.js';

const [file, countText, name, startAtText] = process.argv.slice(2);
const store = openStore({ file: file!, busyTimeoutMs: 20_000 });
// A start barrier between processes; test-only code, so the real clock is fine here.
while (Date.now() < Number(startAtText)) {
  await new Promise((resolve) => setTimeout(resolve, 1));
}
try {
  for (let i = 0; i < Number(countText); i++) {
    store.audit.append({ type: auditType('proxy.request'), actor: `system:${name}`, payload: { i } });
  }
} catch (err) {
  process.stderr.write(`${(err as Error).message}\n`);
  process.exitCode = 1;
} finally {
  store.close();
}
