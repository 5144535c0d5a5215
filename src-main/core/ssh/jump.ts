import { AppError } from '../base/index.js';
import { SshErrorCode } from './errors.js';

export interface JumpSpec {
  user: string | null;
  host: string;
  port: number;
}

const JUMP = /^(?:([A-Za-z0-9._-]+)@)?(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9.-]+))(?::(\d{1,5}))?$/;

/** `[user@]host[:port]` (host may be `[v6]`), exactly one hop as OpenSSH's `-J`. */
export function parseJumpHost(spec: string): JumpSpec {
  if (spec.includes(',')) {
    throw new AppError(SshErrorCode.NEEDS_OPENSSH, `several jump hops ("${spec}") need the openssh transport; the builtin one takes one hop`, { details: { jumpHost: spec } });
  }
  const m = JUMP.exec(spec.trim());
  const port = m?.[4] === undefined ? 22 : Number(m[4]);
  if (!m || port < 1 || port > 65535) {
    throw new AppError(SshErrorCode.JUMP_FAILED, `"${spec}" is not a jump host (user@host:port)`, { details: { jumpHost: spec } });
  }
  return { user: m[1] ?? null, host: (m[2] ?? m[3])!, port };
}
