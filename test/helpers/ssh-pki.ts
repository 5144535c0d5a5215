// OpenSSH certificates for the sshd tests: a CA key pair, user certificates
// (for sshd's TrustedUserCAKeys) and host certificates (for sshd's
// HostCertificate and a known_hosts `@cert-authority` line), all made by
// ssh-keygen so they are exactly what an operator's CA would issue.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { keygen } from './sshd.js';

export interface SshCa {
  /** Private key file (unencrypted). */
  keyFile: string;
  /** `ssh-ed25519 AAAA…` of the CA. */
  publicKey: string;
  /** The `.pub` file (what TrustedUserCAKeys names). */
  publicKeyFile: string;
}

export interface SignOptions {
  /** The certificate's key id (`-I`), logged by sshd on use. */
  identity: string;
  /** `-n`: user names for a user certificate, host names or addresses for a host certificate. */
  principals: string[];
  /** `-V`, e.g. `+1h` or `-2h:-1h`; default `+1h`. */
  validity?: string;
}

export function createCa(dir: string, name: string): SshCa {
  const keyFile = join(dir, name);
  keygen(keyFile, 'ed25519');
  const publicKeyFile = `${keyFile}.pub`;
  return { keyFile, publicKeyFile, publicKey: readFileSync(publicKeyFile, 'utf8').trim().split(/\s+/).slice(0, 2).join(' ') };
}

function sign(ca: SshCa, publicKeyFile: string, options: SignOptions, host: boolean): string {
  if (options.principals.length === 0) throw new Error('a certificate without principals is valid for anyone: name them');
  // ssh-keygen writes <key>-cert.pub beside <key>.pub.
  execFileSync(
    'ssh-keygen',
    ['-q', '-s', ca.keyFile, '-I', options.identity, ...(host ? ['-h'] : []), '-n', options.principals.join(','), '-V', options.validity ?? '+1h', publicKeyFile],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  return publicKeyFile.replace(/\.pub$/, '-cert.pub');
}

/** Signs a user key: returns the `-cert.pub` path (OpenSSH's CertificateFile). */
export function signUserKey(ca: SshCa, publicKeyFile: string, options: SignOptions): string {
  return sign(ca, publicKeyFile, options, false);
}

/** Signs an sshd host key: returns the `-cert.pub` path (sshd's HostCertificate). */
export function signHostKey(ca: SshCa, publicKeyFile: string, options: SignOptions): string {
  return sign(ca, publicKeyFile, options, true);
}

/** What `ssh-keygen -L` says about a certificate (type, key id, principals, validity): for assertions on the fixture itself. */
export function describeCertificate(certFile: string): string {
  return execFileSync('ssh-keygen', ['-L', '-f', certFile], { encoding: 'utf8' });
}

/** A known_hosts line trusting every host key `ca` signs for `host` (`[host]:port` when the port is not 22). */
export function certAuthorityLine(ca: SshCa, host: string, port = 22): string {
  return `@cert-authority ${port === 22 ? host : `[${host}]:${port}`} ${ca.publicKey}\n`;
}
