// Per name clients request: a model's replicas (state, weight share, slots,
// queue, where its requests went) or a group's fallback chain; total failovers.
import { useMemo } from 'react';
import type { ModelRouteView, UpstreamFigures } from '../../../../src-preload/contract/index.js';
import { useAppStore } from '../../app/app-context.js';
import { Badge } from '../../components/Badge.js';
import { MeterBar } from '../../components/MeterBar.js';
import { DASH, dataValue, formatCount, formatPct } from '../../format/format.js';
import { UPSTREAM_STATE_TONE } from './proxy-format.js';
import { chainText, modelsView, type ModelRowView, type ReplicaView } from './proxy-models.js';

const NO_MODELS: readonly ModelRouteView[] = [];
const NO_UPSTREAMS: readonly UpstreamFigures[] = [];
/** A share of 100% is where the requests went, not an alarm. */
const NEVER = 101;

export function ModelsPanel(): React.JSX.Element {
  const models = useAppStore((s) => s.proxy.stats?.models ?? NO_MODELS);
  const upstreams = useAppStore((s) => s.proxy.stats?.upstreams ?? NO_UPSTREAMS);
  const failovers = useAppStore((s) => s.proxy.stats?.failovers);
  const view = useMemo(() => modelsView({ models, upstreams, failovers }), [models, upstreams, failovers]);
  // Replica cells after Model and Kind; a group's chain spans them.
  const replicaCols = view.anyWeighted ? 7 : 6;
  return (
    <section className="panel proxy-models" aria-label="Models and replicas" data-testid="models-panel">
      <h3 className="panel__title">
        Models and replicas
        <span className="proxy-models__failovers" data-testid="models-failovers" data-value={dataValue(view.failovers)} title="Requests that went to another replica or model after a failure before the first byte, since start">
          failovers <span className="num">{formatCount(view.failovers)}</span>
        </span>
      </h3>
      {view.rows.length === 0 ? (
        <p className="muted panel__empty" data-testid="models-empty">
          No models served: add a model service to a host.
        </p>
      ) : (
        <table className="data-table proxy-models__table">
          <thead>
            <tr>
              <th scope="col" className="proxy-models__col-model">Model</th>
              <th scope="col" className="proxy-models__col-kind">Kind</th>
              <th scope="col">Replica (host/service)</th>
              <th scope="col" className="proxy-models__col-state">State</th>
              {view.anyWeighted ? (
                <th scope="col" className="col-num proxy-models__col-weight" title="The replica's weight ÷ the sum of its model's weights">
                  Weight
                </th>
              ) : null}
              <th scope="col" className="col-num proxy-models__col-slots" title="Requests the proxy has in flight / the replica's slots">
                In flight / slots
              </th>
              <th scope="col" className="col-num proxy-models__col-queued">Queued</th>
              <th scope="col" className="col-num proxy-models__col-routed" title="Requests sent to this replica since start (failovers included)">
                Routed
              </th>
              <th scope="col" className="proxy-models__col-share" title="This replica's part of its model's routed requests">
                Share of routed
              </th>
            </tr>
          </thead>
          {view.rows.map((row) => (
            <tbody key={`${row.kind}:${row.name}`} data-testid={`model-row-${row.name}`} data-kind={row.kind}>
              {row.kind === 'group' ? <GroupRow row={row} cols={replicaCols} /> : <ModelRows row={row} weightCol={view.anyWeighted} cols={replicaCols} />}
            </tbody>
          ))}
        </table>
      )}
    </section>
  );
}

function NameCell({ row, rowSpan }: { row: ModelRowView; rowSpan: number }): React.JSX.Element {
  const count = row.kind === 'group' ? `${row.chain.length} models` : `${row.replicas.length} ${row.replicas.length === 1 ? 'replica' : 'replicas'}`;
  return (
    <td rowSpan={rowSpan} className="proxy-models__name-cell">
      <span className="proxy-models__name" title={row.name}>
        {row.name}
      </span>
      <div className="service-model__meta">
        {row.aliases.map((a) => (
          <span key={a} className="alias">
            {a}
          </span>
        ))}
        <span className="muted" data-testid="model-summary">
          {count}
          {row.routedTotal === null ? null : ` · ${formatCount(row.routedTotal)} routed`}
        </span>
      </div>
    </td>
  );
}

function KindCell({ row, rowSpan }: { row: ModelRowView; rowSpan: number }): React.JSX.Element {
  return (
    <td rowSpan={rowSpan} className="proxy-models__kind" data-testid="model-kind" data-value={row.kind}>
      {row.kind === 'group' ? (
        <Badge tone="accent" title="Group alias: the models are tried in order, the next only after a failure before the first byte">
          group
        </Badge>
      ) : (
        'model'
      )}
    </td>
  );
}

function GroupRow({ row, cols }: { row: ModelRowView; cols: number }): React.JSX.Element {
  return (
    <tr className="proxy-models__first">
      <NameCell row={row} rowSpan={1} />
      <KindCell row={row} rowSpan={1} />
      <td colSpan={cols}>
        <span className="proxy-models__chain" data-testid="group-chain" data-value={chainText(row.chain)}>
          {row.chain.map((step, i) => (
            <span key={step.model} className="proxy-models__step">
              {i > 0 ? (
                <span className="proxy-models__arrow" aria-label="then">
                  →
                </span>
              ) : null}
              <span className="proxy-models__step-name" title={step.model}>
                {step.model}
              </span>
              <span className={step.usable === 0 ? 'text-warn' : 'muted'} data-testid="chain-step-usable" data-value={step.usable} title="Replicas that are ready and not failing / all its replicas">
                {step.usable}/{step.replicas} ready
              </span>
            </span>
          ))}
        </span>
      </td>
    </tr>
  );
}

function ModelRows({ row, weightCol, cols }: { row: ModelRowView; weightCol: boolean; cols: number }): React.JSX.Element {
  if (row.replicas.length === 0) {
    return (
      <tr className="proxy-models__first">
        <NameCell row={row} rowSpan={1} />
        <KindCell row={row} rowSpan={1} />
        <td colSpan={cols} className="muted">
          No replica serves it.
        </td>
      </tr>
    );
  }
  return (
    <>
      {row.replicas.map((r, i) => (
        <tr key={r.key} data-testid={`replica-${r.key}`} className={i === 0 ? 'proxy-models__first' : undefined}>
          {i === 0 ? (
            <>
              <NameCell row={row} rowSpan={row.replicas.length} />
              <KindCell row={row} rowSpan={row.replicas.length} />
            </>
          ) : null}
          <ReplicaCells replica={r} weighted={row.weighted} weightCol={weightCol} alone={row.replicas.length === 1} />
        </tr>
      ))}
    </>
  );
}

function ReplicaCells({ replica: r, weighted, weightCol, alone }: { replica: ReplicaView; weighted: boolean; weightCol: boolean; alone: boolean }): React.JSX.Element {
  return (
    <>
      <td className="proxy-models__replica" title={r.key}>
        <span className="proxy-models__host">{r.label}</span>
        <span className="muted">/{r.serviceId}</span>
      </td>
      <td>
        <div className="proxy-models__state">
          {r.state === null ? (
            <span className="muted" title="The proxy sent no figures for this replica">
              {DASH}
            </span>
          ) : (
            <Badge tone={UPSTREAM_STATE_TONE[r.state]} testId="replica-state" value={r.state}>
              {r.state}
            </Badge>
          )}
          {r.failing ? (
            <Badge tone="error" testId="replica-failing" title="Skipped for a few seconds after a failure before the first byte; another replica takes its requests">
              failing
            </Badge>
          ) : null}
        </div>
      </td>
      {weightCol ? (
        <td className="col-num num" data-testid="replica-weight-share" data-value={weighted ? dataValue(r.weightSharePct) : ''} title={r.weight === null ? undefined : `weight ${r.weight}`}>
          {weighted ? formatPct(r.weightSharePct) : alone ? null : <span className="muted">equal</span>}
        </td>
      ) : null}
      <td className="col-num num" data-testid="replica-inflight" data-value={dataValue(r.inFlight)}>
        {formatCount(r.inFlight)} <span className="muted">/ {formatCount(r.slots)}</span>
      </td>
      <td className={`col-num num${r.queued ? ' text-warn' : ''}`} data-testid="replica-queued" data-value={dataValue(r.queued)}>
        {formatCount(r.queued)}
      </td>
      <td className="col-num num" data-testid="replica-routed" data-value={dataValue(r.routed)}>
        {formatCount(r.routed)}
      </td>
      <td className="proxy-models__share" data-testid="replica-routed-share" data-value={dataValue(r.routedSharePct)}>
        <MeterBar pct={r.routedSharePct} text={formatPct(r.routedSharePct)} label="Share of the model's routed requests" warnAt={NEVER} alarmAt={NEVER} />
      </td>
    </>
  );
}
