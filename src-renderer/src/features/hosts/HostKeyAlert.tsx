// A changed (or revoked) host key: refused, loudly, with both fingerprints.
// There is deliberately no button to accept it here. When the old key is one
// this console confirmed, the operator may forget it (host label typed) after
// checking with the host's owner; the new key is then confirmed like any
// unknown key, fingerprint shown.
import { useState } from 'react';
import type { HostKeyProblem } from '../../../../src-preload/contract/index.js';
import { useCall } from './use-call.js';
import './hosts.css';

export function HostKeyAlert({ label, hostKey }: { readonly label: string; readonly hostKey: HostKeyProblem }): React.JSX.Element {
  const revoked = hostKey.status === 'revoked';
  const forget = useCall('hosts.forgetTrust');
  const [typed, setTyped] = useState('');
  const old = hostKey.knownFingerprints[0];
  const canForget = !revoked && hostKey.knownSource === 'console' && old !== undefined;
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
        old entry{hostKey.knownSource === 'console' ? ' from the console trust store (below)' : ' from known_hosts (ssh-keygen -R)'} and connect again.
        Nothing retries on its own.
      </p>
      {canForget ? (
        <form
          className="hostkey-alert__forget"
          onSubmit={(e) => {
            e.preventDefault();
            if (typed === label) void forget.run({ label, fingerprint: old, typedLabel: typed });
          }}
        >
          <label>
            Type <strong>{label}</strong> to forget the old key <code>{old}</code>:{' '}
            <input value={typed} onChange={(e) => setTyped(e.target.value)} autoComplete="off" spellCheck={false} data-testid="hostkey-forget-label" />
          </label>{' '}
          <button type="submit" className="button button--danger button--small" disabled={typed !== label || forget.pending} data-testid="hostkey-forget">
            Forget old key
          </button>
          {forget.error ? (
            <span className="inline-error" role="alert">
              {' '}
              {forget.error}
            </span>
          ) : null}
        </form>
      ) : null}
    </div>
  );
}
