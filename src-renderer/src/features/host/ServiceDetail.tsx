// One model service of the host view: where its figures come from, how it
// sleeps, slots as the server sees them, cache figures with their scope,
// per-engine figures (vLLM data parallel) and router models (llama-server).
import type { ServiceView } from '../../../../src-preload/contract/index.js';
import { Badge } from '../../components/Badge.js';
import { SourceLine } from '../../components/SourceLine.js';
import { useNow } from '../../components/use-now.js';
import { dataValue, formatPct } from '../../format/format.js';
import {
  cacheFigures,
  enginesLabel,
  kindWithVersion,
  kvTitle,
  loadingView,
  ROUTER_MODEL_TONE,
  sleepView,
  slotMismatch,
} from '../fleet/service-facts.js';
import { HEALTH_TEXT, HEALTH_TONE } from '../fleet/service-state.js';
import { EngineTable } from './EngineTable.js';
import { LatencyFacts } from './LatencyFacts.js';

export interface ServiceDetailProps {
  /** The host's label (the service's live figures are keyed by it). */
  readonly host: string;
  readonly service: ServiceView;
  readonly pollIntervalMs: number | null;
}

const RATE_BASIS_TEXT = { live: 'live (running requests included)', counters: 'counters (finished work)' } as const;

export function ServiceDetail({ host, service: s, pollIntervalMs }: ServiceDetailProps): React.JSX.Element {
  const titleId = `svc-detail-${s.id}`;
  const sleep = sleepView(s);
  const mismatch = slotMismatch(s);
  const engines = enginesLabel(s);
  const perEngine = s.perEngine ?? [];
  const loading = loadingView(s, useNow(s.health === 'loading'));
  return (
    <section className={`svc-detail${s.stale ? ' is-stale' : ''}${loading ? ' is-loading' : ''}`} aria-labelledby={titleId} data-testid={`svc-detail-${s.id}`}>
      <header className="svc-detail__head">
        <h3 id={titleId} className="svc-detail__title" title={s.model}>
          {s.model}
        </h3>
        <span className="muted">{s.id}</span>
        <span className="kind" data-testid="service-kind">
          {kindWithVersion(s)}
        </span>
        {s.stale ? (
          <Badge tone="warn" testId="stale" title={s.staleReason ?? 'last scrape failed'}>
            stale
          </Badge>
        ) : null}
        {loading ? (
          <Badge tone={HEALTH_TONE.loading} testId="health" value="loading" title={loading.title}>
            {HEALTH_TEXT.loading}
          </Badge>
        ) : null}
      </header>
      {s.source && !loading ? <SourceLine source={s.source} pollIntervalMs={pollIntervalMs} testId="service-source" subject={`${s.id} figures`} /> : null}
      {s.stale ? <p className="stale-reason svc-detail__stale">{s.staleReason ?? 'last scrape failed; figures are the last good ones'}</p> : null}
      {loading ? (
        <p className="svc-detail__note" data-testid="loading-note" title={loading.title}>
          {loading.note}
          {loading.since ? ` · ${loading.since}` : ''} — its figures are unknown until it serves
        </p>
      ) : null}
      {!s.stale && s.issues && s.issues.length > 0 ? (
        <ul className="stale-reason svc-detail__stale" data-testid="partial-reasons" aria-label={`${s.id}: why some figures are unknown`}>
          {s.issues.map((i) => (
            <li key={i}>{i}</li>
          ))}
        </ul>
      ) : null}
      <dl className="svc-detail__facts">
        <div>
          <dt>Sleep</dt>
          <dd>
            {loading ? (
              <span className="muted" data-testid="sleep-state" data-value={s.sleep} title={loading.title}>
                — (loading its model)
              </span>
            ) : (
              <Badge tone={sleep.tone} testId="sleep-state" value={s.sleep} title={sleep.title}>
                {sleep.text}
              </Badge>
            )}
            {!loading && sleep.note ? (
              <div className="svc-detail__note" data-testid="sleep-note">
                {sleep.note}
              </div>
            ) : null}
          </dd>
        </div>
        <div>
          <dt>Slots</dt>
          <dd className="num" data-testid="slots" data-value={s.slots}>
            <span title="Slots configured for this service (the proxy schedules by them)">{s.slots}</span>
            {mismatch ? (
              <>
                {' '}
                <Badge tone="warn" testId="slot-mismatch" value={String(s.slotsReported)} title="The proxy schedules by the configured count">
                  {mismatch}
                </Badge>
              </>
            ) : s.slotsReported !== null && s.slotsReported !== undefined ? (
              <span className="muted"> · server agrees</span>
            ) : null}
          </dd>
        </div>
        {engines ? (
          <div>
            <dt>Engines</dt>
            <dd className="num" data-testid="engines" data-value={dataValue(s.engines)}>
              {engines}
            </dd>
          </div>
        ) : null}
        <div>
          <dt>KV cache</dt>
          <dd className="num" data-testid="kv-pct" data-value={dataValue(s.kvCachePct)} title={kvTitle(s)}>
            {formatPct(s.kvCachePct, 1)}
            {s.kvCacheEstimated && s.kvCachePct !== null ? (
              <span className="kv-est kv-est--inline" data-testid="kv-estimated">
                {' '}
                est.
              </span>
            ) : null}
          </dd>
        </div>
        {cacheFigures(s).map((f) => (
          <div key={f.id}>
            <dt>{f.label}</dt>
            <dd className="num" data-testid={f.id} data-value={dataValue(f.value)} title={f.title}>
              {f.text}
            </dd>
          </div>
        ))}
        <LatencyFacts host={host} service={s} />
        {s.rateBasis ? (
          <div>
            <dt>Token rates</dt>
            <dd data-testid="rate-basis" data-value={s.rateBasis}>
              {RATE_BASIS_TEXT[s.rateBasis]}
            </dd>
          </div>
        ) : null}
      </dl>
      {perEngine.length > 1 ? <EngineTable serviceId={s.id} engines={perEngine} stale={s.stale} /> : null}
      {s.routerModels && s.routerModels.length > 0 ? (
        <div className="svc-detail__router">
          <h4 className="svc-detail__subtitle">Router models</h4>
          <ul className="router-models" data-testid={`router-models-${s.id}`}>
            {s.routerModels.map((m) => (
              <li key={m.id} data-testid="router-model" data-value={m.status}>
                <code>{m.id}</code>{' '}
                <Badge tone={ROUTER_MODEL_TONE[m.status]} value={m.status}>
                  {m.status}
                </Badge>
              </li>
            ))}
          </ul>
        </div>
      ) : s.routerModels ? (
        <p className="muted">Router mode: no models listed.</p>
      ) : null}
    </section>
  );
}
