import { AppError } from '../base/index.js';
import { parseJumpHop } from '../config/index.js';
import { SshErrorCode } from './errors.js';

export interface JumpSpec {
  user: string | null;
  /** Without brackets. */
  host: string;
  port: number;
}

/** `[user@]host[:port]` (host may be `[v6]`), exactly one hop as OpenSSH's `-J`, held to the config's grammar. */
export function parseJumpHost(spec: string): JumpSpec {
  if (spec.includes(',')) {
    throw new AppError(SshErrorCode.NEEDS_OPENSSH, `several jump hops ("${spec}") need the openssh transport; the builtin one takes one hop`, { details: { jumpHost: spec } });
  }
  const hop = parseJumpHop(spec.trim());
  if (typeof hop === 'string') {
    throw new AppError(SshErrorCode.JUMP_FAILED, `not a jump host (user@host:port): ${hop}`, { details: { jumpHost: spec } });
  }
  return hop;
}
