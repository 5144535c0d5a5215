import { describe, expect, it } from 'vitest';
import { ConfigSchema } from '../../../../src-main/core/config/index.js';
import {
  assertSocketPath,
  assertUsableVersion,
  certificateProblem,
  classifyStderr,
  generatedConfig,
  jumpChain,
  parseCertificateListing,
  parseOpenSshVersion,
} from '../../../../src-main/core/ssh/openssh-config.js';
import { builtinGaps, chooseTransport } from '../../../../src-main/core/ssh/transport.js';

function host(ssh: Record<string, unknown>) {
  return ConfigSchema.parse({ hosts: [{ label: 'gpu-a', ssh: { host: '10.0.0.5', user: 'ops', identityFile: '/keys/id', ...ssh } }] }).hosts[0]!;
}

const BASE = { configPath: '/data/ssh/abc.conf', knownHostsFile: '/home/ops/.ssh/known_hosts', controlPath: '/data/ssh/abc.ctl', helperProgram: '/data/ssh/gc-ssh-helper', keepaliveIntervalS: 5, keepaliveCountMax: 2, connectTimeoutS: 15, agentSock: null };

/** The first value of each keyword, as OpenSSH reads a config (first obtained value wins), for one host alias. */
function firstValues(text: string, alias: string): Map<string, string> {
  const out = new Map<string, string>();
  let applies = true;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const [k, ...rest] = line.split(/\s+/);
    const key = k!.toLowerCase();
    if (key === 'host') {
      applies = rest.some((p) => p === '*' || p === alias);
      continue;
    }
    // A whole quoted argument is read without its quotes, as ssh does.
    if (applies && !out.has(key)) out.set(key, rest.join(' ').replace(/"([^"]*)"/g, '$1'));
  }
  return out;
}

describe('the config the openssh transport writes', () => {
  it("puts the console's trust rules before the host, so nothing later can loosen them", () => {
    const { text, alias } = generatedConfig({ target: host({ jumpHost: 'bastion:2202,ops2@inner' }), ...BASE });
    expect(alias).toBe('gc-target');
    const v = firstValues(text, alias);
    expect(v.get('stricthostkeychecking')).toBe('yes');
    expect(v.get('userknownhostsfile')).toBe('/home/ops/.ssh/known_hosts');
    expect(v.get('globalknownhostsfile')).toBe('/dev/null');
    expect(v.get('knownhostscommand')).toBe('/data/ssh/gc-ssh-helper hostkey %I %H %t %K');
    expect(v.get('forwardagent')).toBe('no');
    expect(v.get('controlpath')).toBe('/data/ssh/abc.ctl');
    expect(v.get('hostname')).toBe('10.0.0.5');
    // Hops without a user get the host's, as the builtin transport does.
    expect(v.get('proxyjump')).toBe('ops@bastion:2202,ops2@inner:22');
    expect(v.get('identityfile')).toBe('/keys/id');
    expect(v.get('identityagent')).toBe('none');
    expect(v.get('identitiesonly')).toBe('yes');
    expect(text.indexOf('StrictHostKeyChecking')).toBeLessThan(text.indexOf('Host gc-target'));
  });

  it('an OpenSSH config alias is connected to as written, through Include, after the trust rules', () => {
    const { text, alias } = generatedConfig({ target: host({ configHost: 'gpu-prod', configFile: '/home/ops/.ssh/config', identityFile: undefined, agent: true }), ...BASE });
    expect(alias).toBe('gpu-prod');
    expect(text).toMatch(/\nInclude "\/home\/ops\/\.ssh\/config"\n$/);
    expect(text.indexOf('KnownHostsCommand')).toBeLessThan(text.indexOf('Include'));
    expect(text).not.toMatch(/HostName/);
  });

  it('quotes paths with spaces and refuses ones ssh_config cannot hold', () => {
    const { text } = generatedConfig({ target: host({ identityFile: '/Users/A B/key', certificateFile: '/Users/A B/key-cert.pub' }), ...BASE, agentSock: '/tmp/agent sock' });
    expect(text).toContain('IdentityFile "/Users/A B/key"');
    expect(text).toContain('CertificateFile "/Users/A B/key-cert.pub"');
    expect(text).toContain('IdentityAgent "/tmp/agent sock"');
    expect(() => generatedConfig({ target: host({ identityFile: '/keys/a"b' }), ...BASE })).toThrow(expect.objectContaining({ code: 'SSH_CONFIG_UNSUPPORTED', message: expect.stringMatching(/double quote/) }));
  });

  it('with an agent, its keys are offered too (IdentitiesOnly off), as the builtin transport does', () => {
    const { text } = generatedConfig({ target: host({ agent: true }), ...BASE, agentSock: '/run/agent.sock' });
    const v = firstValues(text, 'gc-target');
    expect(v.get('identityagent')).toBe('/run/agent.sock');
    expect(v.get('identitiesonly')).toBe('no');
  });

  it('carries a ProxyCommand verbatim', () => {
    const { text } = generatedConfig({ target: host({ proxyCommand: 'ssh -W %h:%p jump.example' }), ...BASE });
    expect(firstValues(text, 'gc-target').get('proxycommand')).toBe('ssh -W %h:%p jump.example');
  });

  it('writes %% where ssh expands tokens, and refuses what no quoting keeps literal', () => {
    const { text } = generatedConfig({ target: host({ identityFile: "/keys/50%off/o'brien key" }), ...BASE, knownHostsFile: '/kh/%h' });
    expect(text).toContain(`IdentityFile "/keys/50%%off/o'brien key"`);
    expect(text).toContain('UserKnownHostsFile "/kh/%%h"');
    const refused = (over: Partial<typeof BASE> & { ssh?: Record<string, unknown> }, what: RegExp) =>
      expect(() => generatedConfig({ target: host(over.ssh ?? {}), ...BASE, ...over })).toThrow(expect.objectContaining({ code: 'SSH_CONFIG_UNSUPPORTED', message: expect.stringMatching(what) }));
    refused({ ssh: { identityFile: '/keys/a\\b' } }, /backslash/);
    refused({ ssh: { identityFile: '${HOME}/.ssh/id' } }, /environment variable/);
    refused({ knownHostsFile: '/kh/a\u001b[2Jb' }, /control character/);
    refused({ helperProgram: '/data/50%/helper' }, /"%"/);
    refused({ ssh: { configHost: 'gpu', configFile: '/home/ops/.ssh/conf*' } }, /glob/);
    refused({ agentSock: '$SSH_AUTH_SOCK' } as never, /not a path/);
  });

  it('a host, user or hop that is not of its grammar is refused even when it did not come through the schema', () => {
    const hostile = (ssh: Record<string, unknown>) => {
      const target = host({});
      return generatedConfig({ ...BASE, target: { ...target, ssh: { ...target.ssh, ...ssh } } });
    };
    expect(() => hostile({ host: "gpu-east.internal\\'$(id>/tmp/pwned)\\'" })).toThrow(expect.objectContaining({ code: 'SSH_CONFIG_UNSUPPORTED', message: expect.stringMatching(/ssh\.host .* is not a host name/) }));
    expect(() => hostile({ host: '-oProxyCommand=id' })).toThrow(/ssh\.host/);
    expect(() => hostile({ user: 'ops;id' })).toThrow(/ssh\.user/);
    expect(() => hostile({ jumpHost: 'ops@a,ops@`id`' })).toThrow(expect.objectContaining({ code: 'SSH_JUMP_FAILED' }));
    expect(() => hostile({ configHost: "x'y" })).toThrow(/ssh\.configHost/);
    expect(hostile({ host: '[2001:db8::5]' }).text).toContain('HostName 2001:db8::5\n');
  });

  it("a jump host needs a config path ssh can paste into its shell line as it is", () => {
    expect(generatedConfig({ target: host({ jumpHost: 'ops@bastion' }), ...BASE }).text).toContain('ProxyJump ops@bastion:22');
    for (const configPath of ['/Users/ops/Library/Application Support/GPU Console/ssh/abc.conf', "/data/it's/abc.conf", '/data/$(id)/abc.conf', '/data/50%/abc.conf']) {
      expect(() => generatedConfig({ target: host({ jumpHost: 'ops@bastion' }), ...BASE, configPath })).toThrow(expect.objectContaining({ code: 'SSH_CONFIG_UNSUPPORTED', message: expect.stringMatching(/--data-dir/) }));
      // Without a jump host ssh never hands the path to a shell.
      expect(() => generatedConfig({ target: host({}), ...BASE, configPath })).not.toThrow();
    }
  });

  it('jump chains keep IPv6 hops bracketed', () => {
    expect(jumpChain('[2001:db8::1]:2222', 'ops')).toBe('ops@[2001:db8::1]:2222');
  });
});

describe('transport choice', () => {
  it('auto picks openssh only for what ssh2 cannot do, and names it', () => {
    expect(chooseTransport(host({}).ssh, 'auto')).toMatchObject({ kind: 'builtin' });
    expect(chooseTransport(host({ certificateFile: '/keys/id-cert.pub' }).ssh, 'auto')).toMatchObject({ kind: 'openssh', why: expect.stringMatching(/certificate/) });
    expect(chooseTransport(host({ jumpHost: 'a,b' }).ssh, 'auto')).toMatchObject({ kind: 'openssh', why: expect.stringMatching(/2 jump hops/) });
    expect(chooseTransport(host({ proxyCommand: 'nc %h %p' }).ssh, 'auto')).toMatchObject({ kind: 'openssh' });
    expect(chooseTransport(host({ configHost: 'x' }).ssh, 'auto')).toMatchObject({ kind: 'openssh' });
  });

  it('a host setting wins over the fleet default, and builtin stays builtin even where it cannot connect', () => {
    expect(chooseTransport(host({ transport: 'builtin', jumpHost: 'a,b' }).ssh, 'openssh')).toMatchObject({ kind: 'builtin' });
    expect(chooseTransport(host({}).ssh, 'openssh')).toMatchObject({ kind: 'openssh', why: 'configured: openssh' });
    expect(builtinGaps(host({ jumpHost: 'a' }).ssh)).toEqual([]);
  });
});

describe('reading OpenSSH', () => {
  it('version: 8.5 or newer', () => {
    expect(parseOpenSshVersion('OpenSSH_9.2p1 Debian-2+deb12u10, OpenSSL 3.0.19 27 Jan 2026')).toMatchObject({ major: 9, minor: 2 });
    expect(() => assertUsableVersion(parseOpenSshVersion('OpenSSH_7.4p1, OpenSSL 1.0.2k-fips'), 'ssh', '')).toThrow(expect.objectContaining({ code: 'SSH_OPENSSH_TOO_OLD', message: expect.stringMatching(/8\.5 or newer/) }));
    expect(() => assertUsableVersion(parseOpenSshVersion('dropbear v2022.83'), 'ssh', 'dropbear v2022.83')).toThrow(expect.objectContaining({ code: 'SSH_OPENSSH_MISSING' }));
  });

  it('a control socket path longer than macOS allows is refused with its length', () => {
    expect(() => assertSocketPath(`/${'d'.repeat(96)}/a.ctl`, 'gpu-a')).not.toThrow(); // 103 bytes: the most macOS takes
    expect(() => assertSocketPath(`/${'d'.repeat(97)}/a.ctl`, 'gpu-a')).toThrow(expect.objectContaining({ code: 'SSH_CONTROL_PATH_TOO_LONG', message: expect.stringMatching(/is 104 bytes; a Unix socket path may hold 103/) }));
    expect(() => assertSocketPath(`/${'d'.repeat(200)}/a.ctl`, 'gpu-a')).toThrow(/--data-dir/);
    expect(() => assertSocketPath('/data/ssh/abc.ctl', 'gpu-a')).not.toThrow();
  });

  it("stderr becomes the builtin transport's codes", () => {
    expect(classifyStderr('root@10.0.0.5: Permission denied (publickey).', 'x')).toMatchObject({ code: 'SSH_AUTH_FAILED', retryable: false });
    expect(classifyStderr('ssh: connect to host 10.0.0.5 port 22: Connection refused', 'x')).toMatchObject({ code: 'SSH_CONNECT_FAILED', retryable: true });
    expect(classifyStderr('ssh: Could not resolve hostname nope: Name or service not known', 'x')).toMatchObject({ code: 'SSH_HOST_UNRESOLVED' });
    expect(classifyStderr('ssh: connect to host 10.0.0.5 port 22: Connection timed out', 'x')).toMatchObject({ code: 'SSH_TIMEOUT', retryable: true });
    expect(classifyStderr('/home/ops/.ssh/config line 4: Bad configuration option: frobnicate', 'x')).toMatchObject({ code: 'SSH_OPENSSH_CONFIG_INVALID', retryable: false });
    expect(classifyStderr('kex_exchange_identification: Connection closed by remote host\nConnection closed by UNKNOWN port 65535', 'x')).toMatchObject({ code: 'SSH_CONNECT_FAILED' });
    expect(classifyStderr('channel 0: open failed: administratively prohibited: open failed\nstdio forwarding failed\nkex_exchange_identification: Connection closed by remote host', 'x')).toMatchObject({ code: 'SSH_JUMP_FAILED' });
    expect(classifyStderr('something new', 'x')).toBeNull();
  });
});

describe('user certificates', () => {
  // Exactly as `ssh-keygen -L -f` (OpenSSH 9.2) prints them.
  const EXPIRED = `uc-cert.pub:
        Type: ssh-ed25519-cert-v01@openssh.com user certificate
        Public key: ED25519-CERT SHA256:drnh0TlrHmEhAUHGYowMc3QLz72TVq/aBcNKFXA31ug
        Signing CA: ED25519 SHA256:yTrk/BpLESJOrTeqnVKOBoyKe12p/FoREp2tHQ5TElY (using ssh-ed25519)
        Key ID: "ops-id"
        Serial: 0
        Valid: from 2026-12-02T11:29:18 to 2026-12-02T12:29:18
        Principals: 
                root
                deploy
        Critical Options: (none)
        Extensions: 
                permit-pty
`;
  const FOREVER = EXPIRED.replace(/Valid: .*/, 'Valid: forever').replace(/Principals: \n\s+root\n\s+deploy\n/, 'Principals: (none)\n');

  it('reads the window and the principals', () => {
    const info = parseCertificateListing(EXPIRED)!;
    expect(info.principals).toEqual(['root', 'deploy']);
    expect(info.validTo).toBe(Date.parse('2026-12-02T12:29:18'));
    expect(parseCertificateListing(FOREVER)).toEqual({ validFrom: null, validTo: null, principals: [] });
    expect(parseCertificateListing('ssh-ed25519 AAAA… a plain key')).toBeNull();
  });

  it('an expired certificate, or one for other principals, is named before ssh tries it', () => {
    const info = parseCertificateListing(EXPIRED)!;
    expect(certificateProblem(info, '/k-cert.pub', 'root', Date.parse('2026-12-02T13:00:00'))).toMatchObject({ code: 'SSH_CERTIFICATE_INVALID', message: expect.stringMatching(/expired at 2026-12-02T12:29:18Z|expired at/) });
    expect(certificateProblem(info, '/k-cert.pub', 'root', Date.parse('2026-12-02T11:00:00'))).toMatchObject({ message: expect.stringMatching(/not valid before/) });
    expect(certificateProblem(info, '/k-cert.pub', 'ubuntu', Date.parse('2026-12-02T12:00:00'))).toMatchObject({ message: expect.stringMatching(/is for root, deploy, not for user ubuntu/) });
    expect(certificateProblem(info, '/k-cert.pub', 'deploy', Date.parse('2026-12-02T12:00:00'))).toBeNull();
    expect(certificateProblem(parseCertificateListing(FOREVER)!, '/k-cert.pub', 'anyone', 0)).toBeNull();
  });
});
