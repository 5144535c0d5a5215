// Authentication for one session: the key file (with a passphrase the operator
// gave earlier) and the ssh-agent socket, the order they are offered in, and
// the error that says what was tried when the host refused them all.
import type { AnyAuthMethod, ParsedKey } from 'ssh2';
import { AppError, toAppError } from '../base/index.js';
import { SshErrorCode } from './errors.js';
import { loadKeyFile } from './keys.js';
import type { PassphraseProvider } from './passphrases.js';
import type { SshHostTarget } from './session.js';

export interface Credentials {
  key: ParsedKey | null;
  keyFile: string | null;
  /** Why the key file was not offered (agent used instead). */
  keySkipped: AppError | null;
  agentSock: string | null;
}

export type AuthMethodName = 'publickey' | 'agent';

/**
 * Reads the key and the agent socket; no network yet. A key that needs a
 * passphrase is skipped (and the reason kept) when the agent can stand in.
 */
export async function loadCredentials(
  ssh: SshHostTarget['ssh'],
  env: Readonly<Record<string, string | undefined>>,
  passphrases: PassphraseProvider,
): Promise<Credentials> {
  // An explicit socket (OpenSSH's IdentityAgent) wins; `agent: true` means the one in SSH_AUTH_SOCK.
  const agentSock = ssh.identityAgent ?? (ssh.agent ? env['SSH_AUTH_SOCK'] || null : null);
  const creds: Credentials = { key: null, keyFile: ssh.identityFile ?? null, keySkipped: null, agentSock };
  if (ssh.identityFile) {
    const passphrase = passphrases.get(ssh.identityFile);
    try {
      creds.key = (await loadKeyFile(ssh.identityFile, passphrase)).key;
    } catch (err) {
      const e = toAppError(err, SshErrorCode.KEY_UNREADABLE);
      if (e.code === SshErrorCode.PASSPHRASE_INCORRECT) passphrases.forget(ssh.identityFile);
      const passphraseProblem = e.code === SshErrorCode.PASSPHRASE_REQUIRED || e.code === SshErrorCode.PASSPHRASE_INCORRECT;
      if (!(passphraseProblem && agentSock)) throw e;
      creds.keySkipped = e;
    }
  }
  if (!creds.key && !agentSock) {
    throw new AppError(
      SshErrorCode.NO_AUTH_METHOD,
      ssh.agent || ssh.identityAgent ? 'ssh-agent requested but SSH_AUTH_SOCK is not set, and no identityFile is configured' : 'no identityFile and no agent configured',
      { details: { methodsTried: [] } },
    );
  }
  return creds;
}

/** The methods to offer, in order: the key file first, then the agent. */
export function authMethods(creds: Credentials): AuthMethodName[] {
  const methods: AuthMethodName[] = [];
  if (creds.key) methods.push('publickey');
  if (creds.agentSock) methods.push('agent');
  return methods;
}

export function authFor(method: AuthMethodName, username: string, creds: Credentials): AnyAuthMethod {
  return method === 'publickey' ? { type: 'publickey', username, key: creds.key! } : { type: 'agent', username, agent: creds.agentSock! };
}

/** The host refused every method offered (`where` names the hop). */
export function authFailure(where: string, role: 'host' | 'jump', tried: string[], creds: Credentials, cause: Error | null): AppError {
  if (tried.length === 0 && creds.keySkipped) return creds.keySkipped;
  const names = tried.map((m) => (m === 'publickey' ? `publickey (${creds.keyFile})` : 'ssh-agent'));
  const skipped = creds.keySkipped ? `; key ${creds.keyFile} not offered: ${creds.keySkipped.code}` : '';
  return new AppError(SshErrorCode.AUTH_FAILED, `${where}: authentication failed; tried ${names.join(', ') || 'nothing'}${skipped}`, {
    details: { methodsTried: tried, role, ...(creds.keySkipped ? { keySkipped: creds.keySkipped.code } : {}) },
    cause,
  });
}
