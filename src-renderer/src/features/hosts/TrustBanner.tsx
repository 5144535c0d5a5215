// In the host card: the host waits for a trust decision. Shows the fingerprint
// and opens the dialog where the operator confirms or refuses it.
import { useState } from 'react';
import type { HostKeyProblem } from '../../../../src-preload/contract/index.js';
import { TrustDialog } from './TrustDialog.js';
import './hosts.css';

export function TrustBanner({ label, hostKey, openInitially = false }: { readonly label: string; readonly hostKey: HostKeyProblem; readonly openInitially?: boolean }): React.JSX.Element {
  const [open, setOpen] = useState(openInitially);
  return (
    <div className="trust-banner" data-testid="host-trust">
      <span>
        Unknown host key on <code>{hostKey.endpoint}</code>: <code className="trust-banner__fp">{hostKey.fingerprint}</code>
      </span>
      <button type="button" className="button button--primary button--small" onClick={() => setOpen(true)} data-testid="trust-review">
        Review host key…
      </button>
      {open ? <TrustDialog label={label} hostKey={hostKey} onClose={() => setOpen(false)} /> : null}
    </div>
  );
}
