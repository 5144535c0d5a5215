// An unknown host key: the operator compares the SHA256 fingerprint with the
// host's own (out of band) and trusts or refuses it. Both are audited in main.
import { useEffect, useRef } from 'react';
import type { HostConnectionState, HostKeyProblem } from '../../../../src-preload/contract/index.js';
import { useServices } from '../../app/app-context.js';
import { useCall } from './use-call.js';
import './hosts.css';

export interface TrustDialogProps {
  readonly label: string;
  readonly hostKey: HostKeyProblem;
  readonly onClose: () => void;
}

export function TrustDialog({ label, hostKey, onClose }: TrustDialogProps): React.JSX.Element {
  const { store } = useServices();
  const trust = useCall('hosts.trust');
  const refuse = useCall('hosts.refuseTrust');
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => ref.current?.focus(), []);
  const busy = trust.pending || refuse.pending;
  const after = (out: { label: string; state: HostConnectionState } | null) => {
    if (!out) return;
    store.getState().applyHostStatus({ label: out.label, state: out.state, message: null });
    onClose();
  };
  const keyFile = hostKey.keyType === 'ssh-rsa' ? 'rsa' : hostKey.keyType.startsWith('ecdsa') ? 'ecdsa' : 'ed25519';
  return (
    <div className="hosts-dialog-backdrop" data-testid={`trust-dialog-${label}`} onKeyDown={(e) => e.key === 'Escape' && onClose()}>
      <div className="hosts-dialog" role="dialog" aria-modal="true" aria-labelledby={`trust-title-${label}`} tabIndex={-1} ref={ref}>
        <h2 id={`trust-title-${label}`} className="hosts-dialog__title">
          Trust the host key of {label}?
        </h2>
        <p className="hosts-dialog__lead">
          {hostKey.role === 'jump' ? 'The jump host ' : 'The host '}
          <code>{hostKey.endpoint}</code> presented a {hostKey.keyType} key that is neither in known_hosts nor confirmed in this console.
          Nothing has been sent to it yet: no key, no passphrase.
        </p>
        <div className="fingerprint" data-testid="trust-fingerprint" data-value={hostKey.fingerprint}>
          <span className="fingerprint__label">SHA256 fingerprint</span>
          <code className="fingerprint__value">{hostKey.fingerprint}</code>
        </div>
        <p className="hosts-dialog__hint">
          Compare it on the host, over a channel you already trust: <code>ssh-keygen -lf /etc/ssh/ssh_host_{keyFile}_key.pub</code>
        </p>
        {trust.error || refuse.error ? (
          <p className="inline-error" role="alert" data-testid="trust-error">
            {trust.error ?? refuse.error}
          </p>
        ) : null}
        <div className="hosts-dialog__actions">
          <button type="button" className="button button--ghost" disabled={busy} onClick={onClose} data-testid="trust-later">
            Decide later
          </button>
          <button
            type="button"
            className="button button--danger-ghost"
            disabled={busy}
            data-testid="trust-refuse"
            onClick={() => void refuse.run({ label, fingerprint: hostKey.fingerprint }).then(after)}
          >
            {refuse.pending ? 'Refusing…' : 'Refuse'}
          </button>
          <button
            type="button"
            className="button button--primary"
            disabled={busy}
            data-testid="trust-confirm"
            onClick={() => void trust.run({ label, fingerprint: hostKey.fingerprint }).then(after)}
          >
            {trust.pending ? 'Connecting…' : 'The fingerprint matches — trust and connect'}
          </button>
        </div>
      </div>
    </div>
  );
}
