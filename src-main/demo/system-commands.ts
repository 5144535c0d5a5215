// What a demo host answers to the system commands an evidence report runs:
// `ss -ltn[p][H]` (its listening TCP sockets, with -p the processes the user
// may see) and `sshd -T` (its sshd settings),
// shaped like iproute2 6.x and OpenSSH 9.x on Ubuntu. The operator `ops` is not
// root: plain `sshd -T` fails as it does for any unprivileged user (it cannot
// read the host keys), while `sudo -n sshd -T` succeeds (ops has passwordless
// sudo, as the restart commands assume).

import type { ExecResult } from './nvidia-smi.js';

export interface ListenerProcess {
  /** The process's comm, as `ss -p` prints it. */
  name: string;
  pid: number;
  fd: number;
  /** Owned by another user (root, a system user): `ss -p` shows it only to root. The model services run as ops. */
  foreign?: boolean;
}

export interface TcpListener {
  /** As ss prints it: `127.0.0.1`, `127.0.0.53%lo`, `[::]`, `*`. */
  address: string;
  port: number;
  /** The Send-Q column of a listener: its accept backlog. */
  backlog: number;
  process?: ListenerProcess;
}

/** Sockets every demo host has besides its model services: systemd-resolved and sshd. */
export const SYSTEM_LISTENERS: readonly TcpListener[] = [
  { address: '127.0.0.53%lo', port: 53, backlog: 4096, process: { name: 'systemd-resolve', pid: 612, fd: 15, foreign: true } },
  { address: '127.0.0.54', port: 53, backlog: 4096, process: { name: 'systemd-resolve', pid: 612, fd: 17, foreign: true } },
  { address: '0.0.0.0', port: 22, backlog: 128, process: { name: 'sshd', pid: 1024, fd: 3, foreign: true } },
  { address: '[::]', port: 22, backlog: 128, process: { name: 'sshd', pid: 1024, fd: 4, foreign: true } },
];

/** The backlog uvicorn (vLLM's HTTP server) listens with. */
export const UVICORN_BACKLOG = 2048;

const SS_FLAGS = new Set(['l', 't', 'n', 'H', '4', '6', 'p']);

function ssUsage(bad: string): ExecResult {
  return {
    stdout: '',
    stderr: `ss: invalid option -- '${bad}'\nUsage: ss [ OPTIONS ]\n       ss [ OPTIONS ] [ FILTER ]\n   -h, --help          this message\n`,
    code: 255,
  };
}

const SERVICE_NAMES: Record<number, string> = { 22: 'ssh', 53: 'domain' };

/**
 * `ss` with short flags only (`-ltn`, `-l -t -n -H`, `-4`/`-6`, `-p`). Without
 * `-l` the demo shows no sockets (it keeps no established-connection table);
 * without `-n` well-known ports are printed by name, as ss does; `-p` adds
 * `users:(("name",pid=N,fd=N))` for the processes the caller may see
 * (`asRoot`: all of them, as under sudo).
 */
export function runSs(args: readonly string[], listeners: readonly TcpListener[], options: { asRoot?: boolean } = {}): ExecResult {
  const flags = new Set<string>();
  for (const arg of args) {
    if (!arg.startsWith('-') || arg === '-') return { stdout: '', stderr: `ss: bad filter expression "${arg}"\n`, code: 255 };
    for (const f of arg.slice(1)) {
      if (!SS_FLAGS.has(f)) return ssUsage(f);
      flags.add(f);
    }
  }
  const header = !flags.has('H');
  let rows = flags.has('l') ? [...listeners] : [];
  if (flags.has('4') && !flags.has('6')) rows = rows.filter((r) => !r.address.startsWith('[') && r.address !== '*');
  if (flags.has('6') && !flags.has('4')) rows = rows.filter((r) => r.address.startsWith('[') || r.address === '*');
  const port = (p: number) => (flags.has('n') ? String(p) : (SERVICE_NAMES[p] ?? String(p)));
  const peer = (r: TcpListener) => (r.address.startsWith('[') ? '[::]' : r.address === '*' ? '*' : '0.0.0.0');
  const users = (r: TcpListener) =>
    flags.has('p') && r.process && (options.asRoot || !r.process.foreign) ? `users:(("${r.process.name}",pid=${r.process.pid},fd=${r.process.fd}))` : '';
  const cells = rows.map((r) => ({ state: 'LISTEN', recvQ: '0', sendQ: String(r.backlog), local: r.address, localPort: port(r.port), peer: peer(r), users: users(r) }));
  // ss right-aligns each address and left-aligns each port around the colon.
  const w = {
    local: Math.max(header ? 'Local Address'.length : 0, ...cells.map((c) => c.local.length)),
    localPort: Math.max(header ? 'Port'.length : 0, ...cells.map((c) => c.localPort.length)),
    peer: Math.max(header ? 'Peer Address'.length : 0, ...cells.map((c) => c.peer.length)),
    users: Math.max('Process'.length, ...cells.map((c) => c.users.length)),
  };
  const lines: string[] = [];
  if (header) lines.push(`State  Recv-Q Send-Q ${'Local Address'.padStart(w.local)}:${'Port'.padEnd(w.localPort)} ${'Peer Address'.padStart(w.peer)}:PortProcess`);
  for (const c of cells) {
    const line = `${c.state} ${c.recvQ.padEnd(6)} ${c.sendQ.padEnd(6)} ${c.local.padStart(w.local)}:${c.localPort.padEnd(w.localPort)} ${c.peer.padStart(w.peer)}:`;
    if (header) lines.push(`${line}${'*'.padEnd(4)}${c.users.padEnd(w.users)}`);
    else lines.push(c.users ? `${line}${'*'.padEnd(4)}${c.users}` : `${line}*`);
  }
  return { stdout: lines.length ? lines.join('\n') + '\n' : '', stderr: '', code: 0 };
}

/** `sshd -T` as an unprivileged user: the host keys are root-only, so sshd gives up (OpenSSH 9.x, exit 1). */
export const SSHD_T_AS_USER: ExecResult = { stdout: '', stderr: 'sshd: no hostkeys available -- exiting.\n', code: 1 };

/**
 * `sshd -T` as root on the demo hosts: Ubuntu's defaults with password logins
 * turned off. OpenSSH prints `PermitRootLogin prohibit-password` (the default)
 * under its older name, `without-password`.
 */
export const SSHD_T_AS_ROOT: ExecResult = {
  stdout:
    [
      'port 22',
      'addressfamily any',
      'listenaddress [::]:22',
      'listenaddress 0.0.0.0:22',
      'usepam yes',
      'logingracetime 120',
      'x11displayoffset 10',
      'maxauthtries 6',
      'maxsessions 10',
      'clientaliveinterval 0',
      'clientalivecountmax 3',
      'requiredrsasize 1024',
      'streamlocalbindmask 0177',
      'unusedconnectiontimeout none',
      'permitrootlogin without-password',
      'ignorerhosts yes',
      'ignoreuserknownhosts no',
      'hostbasedauthentication no',
      'hostbasedusesnamefrompacketonly no',
      'pubkeyauthentication yes',
      'kerberosauthentication no',
      'kerberosorlocalpasswd yes',
      'kerberosticketcleanup yes',
      'gssapiauthentication no',
      'gssapicleanupcredentials yes',
      'gssapikeyexchange no',
      'gssapistrictacceptorcheck yes',
      'gssapistorecredentialsonrekey no',
      'passwordauthentication no',
      'kbdinteractiveauthentication no',
      'printmotd no',
      'printlastlog yes',
      'x11forwarding yes',
      'x11uselocalhost yes',
      'permittty yes',
      'permituserrc yes',
      'strictmodes yes',
      'tcpkeepalive yes',
      'permitemptypasswords no',
      'compression yes',
      'gatewayports no',
      'usedns no',
      'allowtcpforwarding yes',
      'allowagentforwarding yes',
      'disableforwarding no',
      'allowstreamlocalforwarding yes',
      'streamlocalbindunlink no',
      'fingerprinthash SHA256',
      'exposeauthinfo no',
      'pidfile /run/sshd.pid',
      'modulifile /etc/ssh/moduli',
      'xauthlocation /usr/bin/xauth',
      'ciphers chacha20-poly1305@openssh.com,aes128-ctr,aes192-ctr,aes256-ctr,aes128-gcm@openssh.com,aes256-gcm@openssh.com',
      'macs umac-64-etm@openssh.com,umac-128-etm@openssh.com,hmac-sha2-256-etm@openssh.com,hmac-sha2-512-etm@openssh.com,hmac-sha1-etm@openssh.com,umac-64@openssh.com,umac-128@openssh.com,hmac-sha2-256,hmac-sha2-512,hmac-sha1',
      'banner none',
      'forcecommand none',
      'chrootdirectory none',
      'trustedusercakeys none',
      'revokedkeys none',
      'securitykeyprovider internal',
      'authorizedprincipalsfile none',
      'versionaddendum none',
      'authorizedkeyscommand none',
      'authorizedkeyscommanduser none',
      'authorizedprincipalscommand none',
      'authorizedprincipalscommanduser none',
      'hostkeyagent none',
      'kexalgorithms sntrup761x25519-sha512@openssh.com,curve25519-sha256,curve25519-sha256@libssh.org,ecdh-sha2-nistp256,ecdh-sha2-nistp384,ecdh-sha2-nistp521,diffie-hellman-group-exchange-sha256,diffie-hellman-group16-sha512,diffie-hellman-group18-sha512,diffie-hellman-group14-sha256',
      'loglevel INFO',
      'syslogfacility AUTH',
      'authorizedkeysfile .ssh/authorized_keys .ssh/authorized_keys2',
      'hostkey /etc/ssh/ssh_host_rsa_key',
      'hostkey /etc/ssh/ssh_host_ecdsa_key',
      'hostkey /etc/ssh/ssh_host_ed25519_key',
      'acceptenv LANG',
      'acceptenv LC_*',
      'authenticationmethods any',
      'subsystem sftp /usr/lib/openssh/sftp-server',
      'maxstartups 10:30:100',
      'persourcemaxstartups none',
      'persourcenetblocksize 32:128',
      'permittunnel no',
      'ipqos lowdelay throughput',
      'rekeylimit 0 0',
      'permitopen any',
      'permitlisten any',
      'permituserenvironment no',
      'pubkeyauthoptions none',
    ].join('\n') + '\n',
  stderr: '',
  code: 0,
};

const SSHD = new Set(['sshd', '/usr/sbin/sshd']);

/** `sshd -T` or `sudo -n sshd -T` (absolute path allowed); null for any other command line. */
export function runSshdTest(argv: readonly string[]): ExecResult | null {
  if (argv.length === 2 && SSHD.has(argv[0]!) && argv[1] === '-T') return SSHD_T_AS_USER;
  if (argv.length === 4 && argv[0] === 'sudo' && argv[1] === '-n' && SSHD.has(argv[2]!) && argv[3] === '-T') return SSHD_T_AS_ROOT;
  return null;
}
