// Connect / Disconnect with the call's error shown inline next to the button.
import type { HostConnectionState } from '../../../../src-preload/contract/index.js';
import { useServices, useAppStore } from '../../app/app-context.js';
import { IDLE_OP } from '../../store/fleet-slice.js';
import { toContractError } from '../../transport/transport.js';
import { useCall } from '../hosts/use-call.js';
import { offersConnect } from './host-state.js';

export interface HostActionsProps {
  readonly label: string;
  readonly state: HostConnectionState;
}

export function HostActions({ label, state }: HostActionsProps): React.JSX.Element {
  const { transport, store } = useServices();
  const op = useAppStore((s) => s.fleet.ops[label] ?? IDLE_OP);
  const connect = offersConnect(state);
  const channel = connect ? 'hosts.connect' : 'hosts.disconnect';

  const run = (): void => {
    const { setHostOp, applyHostStatus } = store.getState();
    setHostOp(label, { pending: connect ? 'connect' : 'disconnect', error: null });
    transport.invoke(channel, { label }).then(
      (result) => {
        applyHostStatus({ label: result.label, state: result.state, message: null });
        setHostOp(label, IDLE_OP);
      },
      (error: unknown) => {
        const e = toContractError(error);
        setHostOp(label, { pending: null, error: `${e.code}: ${e.message}` });
      },
    );
  };

  const reconnect = useCall('hosts.reconnect');
  const reconnectNow = (): void => {
    void reconnect.run({ label }).then((out) => {
      if (out) store.getState().applyHostStatus({ label: out.label, state: out.state, message: null });
    });
  };
  // Reconnect now makes sense whenever a link exists or is being retried; trust and passphrase states have their own prompts.
  const offersReconnect = state === 'connected' || state === 'reconnecting' || state === 'connecting';

  const verb = connect ? 'Connect' : 'Disconnect';
  return (
    <div className="host-actions">
      {op.error || reconnect.error ? (
        <span className="inline-error" role="alert" data-testid="host-action-error">
          {op.error ?? reconnect.error}
        </span>
      ) : null}
      {offersReconnect ? (
        <button
          type="button"
          className="button"
          onClick={reconnectNow}
          disabled={reconnect.pending || op.pending !== null}
          aria-label={`${reconnect.pending ? 'Reconnecting…' : 'Reconnect now'}: ${label}`}
          data-testid="host-reconnect"
        >
          {reconnect.pending ? 'Reconnecting…' : 'Reconnect now'}
        </button>
      ) : null}
      <button
        type="button"
        className={`button${connect ? ' button--primary' : ''}`}
        onClick={run}
        disabled={op.pending !== null}
        aria-label={`${verb} ${label}`}
        data-testid={connect ? 'host-connect' : 'host-disconnect'}
      >
        {op.pending === 'connect' ? 'Connecting…' : op.pending === 'disconnect' ? 'Disconnecting…' : verb}
      </button>
    </div>
  );
}
