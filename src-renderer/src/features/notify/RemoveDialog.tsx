// Confirms removing a channel made in the console. Cancel has the focus and
// Escape backs out; only the explicit Remove button calls removeChannel.
import { useState } from 'react';
import type { NotifyChannelView } from '../../../../src-preload/contract/index.js';
import { useServices } from '../../app/app-context.js';
import { toContractError } from '../../transport/transport.js';
import { useDialogDismiss } from '../../app/use-dialog.js';

export function RemoveDialog({ channel, onClose, onRemoved }: { channel: NotifyChannelView; onClose: () => void; onRemoved: () => void }): React.JSX.Element {
  const { transport } = useServices();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const cancelRef = useDialogDismiss(onClose);
  const remove = (): void => {
    setBusy(true);
    transport.invoke('notifications.removeChannel', { id: channel.id }).then(onRemoved, (err: unknown) => {
      const e = toContractError(err);
      setBusy(false);
      setError(`${e.code}: ${e.message}`);
    });
  };
  return (
    <div className="dialog-backdrop" role="presentation">
      <div className="dialog" role="dialog" aria-modal="true" aria-labelledby="notify-remove-title" data-testid="notify-remove-dialog">
        <h2 id="notify-remove-title">
          Remove channel <code>{channel.id}</code>?
        </h2>
        <p>
          {channel.kind} to <code>{channel.maskedUrl}</code> stops receiving notices.
          {channel.hasSecret ? ' The secret the console stored for it is deleted too.' : ''} Its past deliveries stay listed.
        </p>
        {error ? (
          <p className="inline-error" role="alert">
            {error}
          </p>
        ) : null}
        <div className="dialog__actions">
          <button type="button" className="button" ref={cancelRef} onClick={onClose} disabled={busy} data-testid="notify-remove-cancel">
            Cancel
          </button>
          <button type="button" className="button button--danger" onClick={remove} disabled={busy} data-testid="notify-remove-confirm">
            Remove {channel.id}
          </button>
        </div>
      </div>
    </div>
  );
}
