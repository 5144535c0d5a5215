// Which key files may sign a report. A signature says "the operator vouches
// for this evidence", so the key must be the operator's own and kept as ssh
// keeps one: `ssh-keygen -Y sign` (like ssh) refuses a private key that others
// can read, and a console running as root could otherwise sign with the
// machine's SSH host key — anyone trusting that key for the host would then
// trust the report.
import { realpath, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { AppError, escapeControls } from '../base/index.js';
import { ReportErrorCode } from './errors.js';

/** Where the files live that are the machine's, never an operator's: host keys and other system keys. */
const SYSTEM_DIRS = ['/etc/', '/private/etc/'];
/** How OpenSSH names host keys (ssh-keygen -A, sshd_config HostKey), wherever they are kept. */
const HOST_KEY_NAME = /^ssh_host_.*key$/;

export interface SigningKeyOwner {
  /** The console's user id; null where the platform has none (Windows: ownership and modes are not checked). */
  uid: number | null;
}

export const consoleUser = (): SigningKeyOwner => ({ uid: typeof process.getuid === 'function' ? process.getuid() : null });

function refused(keyFile: string, why: string, details: Record<string, unknown>): AppError {
  return new AppError(ReportErrorCode.SIGNING_KEY_REFUSED, `signing key ${keyFile} is refused: ${why}`, { details: { path: keyFile, ...details } });
}

/**
 * Refuses a signing key file that is clearly not the operator's own: a host key (by its name or its place
 * under /etc), a file another user owns, or a private key that group or others may read. A path that does
 * not resolve is left to the loader, which names the errno.
 */
export async function checkSigningKeyFile(keyFile: string, owner: SigningKeyOwner = consoleUser()): Promise<void> {
  let real: string;
  try {
    real = await realpath(keyFile);
  } catch {
    return;
  }
  if (HOST_KEY_NAME.test(basename(real)) || SYSTEM_DIRS.some((d) => real.startsWith(d))) {
    throw refused(keyFile, `${real} is a host or system key, not an operator's; sign with your own key (ssh-keygen -t ed25519) or --sign-agent`, { realPath: real });
  }
  if (owner.uid === null) return;
  const st = await stat(real);
  // A FIFO, a device, a folder: the loader names what it is.
  if (!st.isFile()) return;
  if (st.uid !== owner.uid) {
    throw refused(keyFile, `it is owned by uid ${st.uid}, not by the console's user (uid ${owner.uid})`, { ownerUid: st.uid });
  }
  const mode = st.mode & 0o777;
  if ((mode & 0o077) !== 0) {
    const octal = mode.toString(8).padStart(4, '0');
    throw refused(keyFile, `permissions ${octal} let others read it; a private key must be readable by its owner only (chmod 600 ${keyFile}), as ssh-keygen -Y sign requires`, { mode: octal });
  }
}

/** A key whose comment says it is a host key (`ssh-keygen -C`), wherever the file was copied to. */
export function checkSigningKeyComment(keyFile: string, comment: string): void {
  if (/ssh_host_|\bhost[ _-]?key\b/i.test(comment)) throw refused(keyFile, `its comment "${escapeControls(comment)}" says it is a host key, not an operator's`, { comment });
}
