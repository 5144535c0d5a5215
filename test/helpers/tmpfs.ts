// A small tmpfs for tests that fill a data folder (issue #33 item 3): mount,
// probe whether mounting is allowed here at all (root / CAP_SYS_ADMIN), unmount.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Mounts a tmpfs of `size` (mount's syntax: `8m`) on a new folder, or says why it cannot (not root, no CAP_SYS_ADMIN, no mount binary). */
export function mountTmpfs(size: string, prefix = 'gc-tmpfs-'): { dir: string; error: null } | { dir: null; error: string } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0700`, 'tmpfs', dir], { stdio: 'pipe' });
    return { dir, error: null };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    const stderr = (err as { stderr?: Buffer }).stderr?.toString().trim();
    return { dir: null, error: stderr || (err as Error).message };
  }
}

/** Unmounts and removes a folder mountTmpfs made; a failure is said, not thrown (the test's own result stands). */
export function unmountTmpfs(dir: string): void {
  try {
    execFileSync('umount', [dir], { stdio: 'pipe' });
    rmSync(dir, { recursive: true, force: true });
  } catch (err) {
    console.warn(`could not unmount ${dir}: ${(err as Error).message}`);
  }
}

/** Why a tmpfs cannot be mounted here (null: it can), tried and undone at once so a filtered-out run leaves none behind. */
export function tmpfsRefusal(): string | null {
  const probe = mountTmpfs('1m', 'gc-tmpfs-probe-');
  if (probe.error !== null) return probe.error;
  unmountTmpfs(probe.dir);
  return null;
}
