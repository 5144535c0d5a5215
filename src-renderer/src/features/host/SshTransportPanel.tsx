// How the console reaches this host: the SSH transport, why it was chosen,
// the client, and (openssh) the effective settings `ssh -G` reported, so an
// operator can check ProxyJump, certificate and known_hosts at a glance.
import type { SshTransportView } from '../../../../src-preload/contract/index.js';

const LABELS: Record<string, string> = {
  hostname: 'HostName',
  port: 'Port',
  user: 'User',
  proxyjump: 'ProxyJump',
  proxycommand: 'ProxyCommand',
  identityfile: 'IdentityFile',
  certificatefile: 'CertificateFile',
  identityagent: 'IdentityAgent',
  identitiesonly: 'IdentitiesOnly',
  userknownhostsfile: 'UserKnownHostsFile',
  stricthostkeychecking: 'StrictHostKeyChecking',
  controlpath: 'ControlPath',
  serveraliveinterval: 'ServerAliveInterval',
  serveralivecountmax: 'ServerAliveCountMax',
  connecttimeout: 'ConnectTimeout',
};

export function SshTransportPanel({ transport }: { transport: SshTransportView | undefined }): React.JSX.Element | null {
  if (!transport) return null;
  const effective = transport.effective ? Object.entries(transport.effective) : [];
  return (
    <section className="ssh-transport" aria-label="SSH transport" data-testid="ssh-transport" data-kind={transport.kind}>
      <p>
        <strong>SSH: {transport.kind === 'openssh' ? 'OpenSSH client (ControlMaster)' : 'builtin (ssh2)'}</strong>{' '}
        <span className="muted" data-testid="ssh-transport-why">
          {transport.why}
          {transport.client && transport.kind === 'openssh' ? ` · ${transport.client}` : ''}
        </span>
      </p>
      {transport.commands ? (
        <p className="muted small" data-testid="ssh-transport-commands">
          Commands: {transport.commands}
        </p>
      ) : null}
      {effective.length > 0 ? (
        <details>
          <summary>Effective settings (ssh -G)</summary>
          <table className="kv-table" data-testid="ssh-effective">
            <tbody>
              {effective.map(([k, v]) => (
                <tr key={k}>
                  <th scope="row">{LABELS[k] ?? k}</th>
                  <td>
                    <code>{v}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </details>
      ) : null}
    </section>
  );
}
