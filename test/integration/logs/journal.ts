// A real journal for the logs tests, without a running journald: entries in
// journald's export format written to a journal file by Debian's
// systemd-journal-remote (package systemd-journal-remote), read by the real
// journalctl. The test sshd's sessions find a `journalctl` wrapper first on
// PATH that adds `--file <that journal>`: the product's command runs as it
// would on a host, and the journal it reads is the test's. (The product has
// no use for a journal directory setting, so none was added for the test.)
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const JOURNAL_REMOTE = '/lib/systemd/systemd-journal-remote';
export const HAVE_JOURNAL = existsSync(JOURNAL_REMOTE) && existsSync('/usr/bin/journalctl');

export interface TestJournal {
  file: string;
  /** Folder holding the `journalctl` wrapper: put it first on the sessions' PATH. */
  binDir: string;
  /** Appends entries of `unit` (one MESSAGE each; realtime now + i µs). */
  append(unit: string, messages: readonly string[]): void;
}

export function createTestJournal(dir: string): TestJournal {
  const file = join(dir, 'test.journal');
  const binDir = join(dir, 'jbin');
  mkdirSync(binDir, { recursive: true });
  writeFileSync(join(binDir, 'journalctl'), `#!/bin/sh\nexec /usr/bin/journalctl --file ${file} "$@"\n`);
  chmodSync(join(binDir, 'journalctl'), 0o755);
  let seq = 0;
  return {
    file,
    binDir,
    append(unit, messages) {
      const nowUs = Date.now() * 1000;
      const entries = messages.map((m) => {
        seq++;
        return [`__REALTIME_TIMESTAMP=${nowUs + seq}`, `__MONOTONIC_TIMESTAMP=${seq}`, '_BOOT_ID=0123456789abcdef0123456789abcdef', `_SYSTEMD_UNIT=${unit}`, 'SYSLOG_IDENTIFIER=vllm', '_PID=4242', `MESSAGE=${m}`, ''].join('\n');
      });
      execFileSync(JOURNAL_REMOTE, ['-o', file, '-'], { input: entries.join('\n') + '\n', stdio: ['pipe', 'ignore', 'pipe'] });
    },
  };
}
