// The Test action of a tunnel: GET /v1/models, then a 1-token chat, through
// the tunnel; the result and latencies come from main (and are audited there).
import type { TunnelTestResult } from '../../../../src-preload/contract/index.js';
import { useCall } from './use-call.js';
import './hosts.css';

export interface TunnelTestProps {
  readonly label: string;
  readonly serviceId: string;
  /** The last test known to main (from the snapshot), shown until a new one runs here. */
  readonly last: TunnelTestResult | null;
}

function summary(r: TunnelTestResult): string {
  if (r.ok) return `OK · ${r.steps.map((s) => `${s.name} ${Math.round(s.latencyMs)} ms`).join(' · ')}`;
  return `${r.error?.code ?? 'FAILED'}: ${r.error?.message ?? ''}`;
}

export function TunnelTest({ label, serviceId, last }: TunnelTestProps): React.JSX.Element {
  const call = useCall('tunnels.test');
  const shown = call.result ?? last;
  return (
    <div className="tunnel-test">
      <button
        type="button"
        className="button button--small"
        onClick={() => void call.run({ label, serviceId })}
        disabled={call.pending}
        aria-label={`Test the ${serviceId} tunnel on ${label}`}
        data-testid="tunnel-test"
      >
        {call.pending ? 'Testing…' : 'Test'}
      </button>
      {call.error ? (
        <span className="inline-error" role="alert">
          {call.error}
        </span>
      ) : shown ? (
        <span
          className={`tunnel-test__result tunnel-test__result--${shown.ok ? 'ok' : 'fail'}`}
          data-testid="tunnel-test-result"
          data-value={shown.ok ? 'ok' : 'failed'}
          title={shown.steps.map((s) => `${s.name}: ${s.detail}`).join('\n')}
        >
          {summary(shown)}
        </span>
      ) : null}
    </div>
  );
}
