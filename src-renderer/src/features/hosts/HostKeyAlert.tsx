// A changed (or revoked) host key: refused, loudly, with both fingerprints.
// There is deliberately no button to accept it here.
import type { HostKeyProblem } from '../../../../src-preload/contract/index.js';
import './hosts.css';

export function HostKeyAlert({ hostKey }: { readonly hostKey: HostKeyProblem }): React.JSX.Element {
  const revoked = hostKey.status === 'revoked';
  return (
    <div className="hostkey-alert" role="alert" data-testid="hostkey-alert" data-value={hostKey.status}>
      <strong className="hostkey-alert__title">{revoked ? 'HOST KEY REVOKED' : 'HOST KEY CHANGED'} — connection refused</strong>
      <dl className="hostkey-alert__keys">
        <div>
          <dt>{hostKey.role === 'jump' ? 'Jump host' : 'Host'}</dt>
          <dd>
            <code>{hostKey.endpoint}</code> ({hostKey.keyType})
          </dd>
        </div>
        <div>
          <dt>Presented now</dt>
          <dd>
            <code data-testid="hostkey-presented">{hostKey.fingerprint}</code>
          </dd>
        </div>
        {hostKey.knownFingerprints.length > 0 ? (
          <div>
            <dt>Known ({hostKey.knownSource === 'console' ? 'confirmed in this console' : 'known_hosts'})</dt>
            <dd>
              {hostKey.knownFingerprints.map((fp) => (
                <code key={fp} data-testid="hostkey-known">
                  {fp}
                </code>
              ))}
            </dd>
          </div>
        ) : null}
      </dl>
      <p className="hostkey-alert__hint">
        Someone may be intercepting the connection, or the host was reinstalled. Confirm with the host&apos;s owner; if the new key is right, remove the
        old entry{hostKey.knownSource === 'console' ? ' from the console trust store' : ' from known_hosts (ssh-keygen -R)'} and connect again. Nothing
        retries on its own.
      </p>
    </div>
  );
}
