// Both SSH transports against one real sshd on loopback, for the logs tests:
// the builtin (ssh2) session and the openssh (ControlMaster) session, each
// logged in with a test key and trusting the sshd's key through known_hosts.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigSchema } from '../../../src-main/core/config/index.js';
import { MemoryTrustStore, OpenSshHelperServer, OpenSshProbe, OpenSshSession, SshConnection, type SshSession } from '../../../src-main/core/ssh/index.js';
import { HAVE_SSHD, keygen, knownHostsLine, startLoopbackSshd, type Sshd, type SshdOptions } from '../../helpers/sshd.js';
import { HAVE_OPENSSH } from '../../helpers/ssh-tools.js';

export const TRANSPORTS = ['builtin', 'openssh'] as const;
export type Transport = (typeof TRANSPORTS)[number];
/** The logs tests need a real sshd and the OpenSSH client (both transports run). */
export const HAVE_SSH_PARTS = HAVE_SSHD && HAVE_OPENSSH;

export interface LoopbackWorld {
  dir: string;
  sshd: Sshd;
  session(transport: Transport, label?: string): SshSession;
  dispose(): Promise<void>;
}

/** One sshd (INFO log: at DEBUG1 sshd writes its debug lines into a session's stderr, which the logs tests read). */
export async function loopbackWorld(options: Partial<SshdOptions> = {}): Promise<LoopbackWorld> {
  // The control folder holds a Unix socket path: keep it short.
  const dir = mkdtempSync(join(tmpdir(), 'gclg-'));
  const key = join(dir, 'id');
  keygen(key, 'ed25519');
  const sshd = await startLoopbackSshd({ parentDir: dir, authorizedKeyFiles: [`${key}.pub`], logLevel: 'INFO', ...options });
  const kh = join(dir, 'known_hosts');
  writeFileSync(kh, knownHostsLine(sshd));
  const ctl = join(dir, 'c');
  mkdirSync(ctl, { mode: 0o700 });
  const helper = new OpenSshHelperServer(ctl);
  const probe = new OpenSshProbe();
  const sessions: SshSession[] = [];
  let n = 0;
  return {
    dir,
    sshd,
    session(transport, label = `lg-${transport}-${++n}`) {
      const target = ConfigSchema.parse({
        hosts: [{ label, ssh: { host: '127.0.0.1', port: sshd.port, user: 'root', identityFile: key, transport, keepaliveIntervalMs: 1_000 }, knownHostsFile: kh }],
      }).hosts[0]!;
      const common = { services: { trustStore: new MemoryTrustStore() }, backoff: { initialMs: 100, maxMs: 300 }, readyTimeoutMs: 5_000 };
      const s = transport === 'builtin' ? new SshConnection(target, common) : new OpenSshSession(target, { ...common, controlDir: ctl, helper, probe });
      sessions.push(s);
      return s;
    },
    async dispose() {
      await Promise.all(sessions.map((s) => s.dispose()));
      await helper.dispose();
      await sshd.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
