// Which SSH transport a host gets. `builtin` is ssh2 inside the console;
// `openssh` runs the system client with one ControlMaster per host. `auto`
// takes openssh when the host needs what ssh2 cannot do (certificates,
// ProxyCommand, several jump hops, an OpenSSH config alias) or when the
// measurements in the README favour it and a usable client is present;
// otherwise builtin. The choice and its reason are shown on the host.
import { execFile } from 'node:child_process';
import type { SshConfig, SshTransport } from '../config/index.js';
import { AppError } from '../base/index.js';
import { SshErrorCode } from './errors.js';
import { assertUsableVersion, parseOpenSshVersion, type OpenSshVersion } from './openssh-config.js';

export type TransportKind = 'builtin' | 'openssh';

export interface TransportChoice {
  kind: TransportKind;
  /** What was asked for (per host, else the fleet default). */
  requested: SshTransport;
  why: string;
}

/** What the builtin transport cannot do for this host, in words; empty when it can do everything. */
export function builtinGaps(ssh: SshConfig): string[] {
  const gaps: string[] = [];
  if (ssh.certificateFile) gaps.push('a user certificate (certificateFile)');
  if (ssh.proxyCommand) gaps.push('ProxyCommand');
  if (ssh.jumpHost && ssh.jumpHost.includes(',')) gaps.push(`${ssh.jumpHost.split(',').length} jump hops`);
  if (ssh.configHost) gaps.push(`an OpenSSH config alias (configHost ${ssh.configHost}: Include, Match and the rest are read by ssh only)`);
  return gaps;
}

/** The builtin transport refuses, up front, a host it would connect wrongly. */
export function assertBuiltinCan(label: string, ssh: SshConfig): void {
  const gaps = builtinGaps(ssh);
  if (gaps.length === 0) return;
  throw new AppError(SshErrorCode.NEEDS_OPENSSH, `${label}: ${gaps.join(', ')} needs the openssh transport (set ssh.transport: openssh or auto)`, {
    details: { gaps },
  });
}

/** The kind for a host: what it asks for (else the fleet default); `auto` takes openssh only when the host needs it. */
export function chooseTransport(ssh: SshConfig, fleetDefault: SshTransport): TransportChoice {
  const requested = ssh.transport ?? fleetDefault;
  if (requested === 'builtin') return { kind: 'builtin', requested, why: 'configured: builtin' };
  if (requested === 'openssh') return { kind: 'openssh', requested, why: 'configured: openssh' };
  const gaps = builtinGaps(ssh);
  // Even without a usable client: the openssh transport then says what is missing, which is the truth.
  if (gaps.length > 0) return { kind: 'openssh', requested, why: `auto: ${gaps.join(', ')} needs OpenSSH` };
  return { kind: 'builtin', requested, why: 'auto: builtin (the host needs nothing only OpenSSH does)' };
}

/** Runs `ssh -V` once per binary; the answer (or why there is none) is cached for the console's life. */
export class OpenSshProbe {
  private readonly cache = new Map<string, Promise<{ version: OpenSshVersion | null; error: AppError | null }>>();

  probe(binary: string): Promise<{ version: OpenSshVersion | null; error: AppError | null }> {
    let p = this.cache.get(binary);
    if (!p) {
      p = new Promise((resolve) => {
        execFile(binary, ['-V'], { timeout: 5_000 }, (err, stdout, stderr) => {
          const text = `${stderr}${stdout}`;
          if (err && (err as NodeJS.ErrnoException).code === 'ENOENT') {
            resolve({
              version: null,
              error: new AppError(SshErrorCode.OPENSSH_MISSING, `no OpenSSH client "${binary}" found (PATH=${process.env['PATH'] ?? ''}); install openssh-client, set ssh.binary, or use transport: builtin`, {
                details: { binary },
              }),
            });
            return;
          }
          try {
            resolve({ version: assertUsableVersion(parseOpenSshVersion(text), binary, text), error: null });
          } catch (e) {
            resolve({ version: null, error: e as AppError });
          }
        });
      });
      this.cache.set(binary, p);
    }
    return p;
  }
}
