import { memo } from 'react';
import { serviceSeries, type ServiceView } from '../../../../src-preload/contract/index.js';
import { Badge } from '../../components/Badge.js';
import { CopyButton } from '../../components/CopyButton.js';
import { MeterBar } from '../../components/MeterBar.js';
import { dataValue, displayUrl, formatCount, formatPct, formatTokPerS } from '../../format/format.js';
import { HEALTH_TEXT, HEALTH_TONE, TUNNEL_TONE } from './service-state.js';
import { enginesLabel, figuresNote, KV_ESTIMATE_TITLE, kindWithVersion, loadingView, rateBasisTitle, sleepView, slotMismatch } from './service-facts.js';
import { SourceLine } from '../../components/SourceLine.js';
import { TunnelTest } from '../hosts/TunnelTest.js';
import { useNow } from '../../components/use-now.js';
import { formatUntil } from '../../format/format.js';
import { TokSparkline } from './TokSparkline.js';
import { LiveFigure } from './LiveFigure.js';
import { formatUsdPerMTok } from './live-figures.js';
import { TtftCell } from './TtftCell.js';

export interface ServiceRowProps {
  readonly label: string;
  readonly service: ServiceView;
  readonly pollIntervalMs?: number | null;
}

export const ServiceRow = memo(function ServiceRow({ label, service: s, pollIntervalMs = null }: ServiceRowProps): React.JSX.Element {
  const sleep = sleepView(s);
  const mismatch = slotMismatch(s);
  const engines = enginesLabel(s);
  const asleep = s.sleep === 'asleep-1' || s.sleep === 'asleep-2';
  const retryAt = s.tunnel.nextRetryAt ?? null;
  const now = useNow(retryAt !== null || s.health === 'loading');
  const loading = loadingView(s, now);
  const probe = s.tunnel.lastProbe ?? null;
  const note = figuresNote(s);
  return (
    <tr
      data-testid={`service-${label}-${s.id}`}
      className={`${s.stale ? 'is-stale' : ''}${asleep ? ' is-asleep' : ''}${loading ? ' is-loading' : ''}`.trim() || undefined}
    >
      <td className="service-model">
        <div className="service-model__head">
          <span className="service-model__name" title={s.model}>
            {s.model}
          </span>
          {s.stale ? (
            <Badge tone="warn" testId="stale" title={s.staleReason ?? 'last scrape failed'}>
              stale
            </Badge>
          ) : null}
        </div>
        <div className="service-model__meta">
          <span className="muted">{s.id}</span>
          <span className="kind" data-testid="service-kind" title={s.version ? `${s.kind}, version ${s.version}` : `${s.kind} (version not reported)`}>
            {kindWithVersion(s)}
          </span>
          {s.aliases.map((alias) => (
            <span key={alias} className="alias">
              {alias}
            </span>
          ))}
          {engines ? (
            <Badge tone="neutral" testId="engines" value={String(s.engines)} title="vLLM data-parallel engines (per-engine figures in the host view)">
              {engines}
            </Badge>
          ) : null}
          {mismatch ? (
            <Badge tone="warn" testId="slot-mismatch" value={String(s.slotsReported)} title="The server's own slot count differs from the configuration; the proxy schedules by the configured count">
              {mismatch}
            </Badge>
          ) : null}
        </div>
        {/* While it loads, the state cell names where that comes from (/health): this line would say /slots. */}
        {s.source && !loading ? (
          <div className="service-model__source">
            <SourceLine source={s.source} pollIntervalMs={pollIntervalMs} testId="service-source" subject={`${s.id} figures`} />
          </div>
        ) : null}
        {note ? (
          <div className="muted" data-testid="figures-note">
            {note}
          </div>
        ) : null}
        {s.stale ? <div className="stale-reason" data-testid="stale-reason">{s.staleReason ?? 'last scrape failed; figures are the last good ones'}</div> : null}
        {!s.stale && s.issues && s.issues.length > 0 ? (
          <div className="stale-reason" data-testid="partial-reason" title={s.issues.join('\n')}>
            partial reading: {s.issues[0]}
            {s.issues.length > 1 ? ` (+${s.issues.length - 1} more)` : ''}
          </div>
        ) : null}
      </td>
      <td className="col-tunnel">
        <div className="tunnel">
          <Badge tone={TUNNEL_TONE[s.tunnel.state]} testId="tunnel-state" value={s.tunnel.state} title={s.tunnel.lastError?.message}>
            {s.tunnel.state}
          </Badge>
          {s.tunnel.localUrl ? (
            <>
              <code className="tunnel__url" data-testid="tunnel-url" data-value={s.tunnel.localUrl} title={s.tunnel.localUrl}>
                {displayUrl(s.tunnel.localUrl)}
              </code>
              <CopyButton text={s.tunnel.localUrl} label={`Copy ${s.id} URL`} />
            </>
          ) : (
            <span className="muted" data-testid="tunnel-url" data-value="">
              —
            </span>
          )}
        </div>
        {s.tunnel.lastError ? (
          <div className="tunnel__error" data-testid="tunnel-error">
            {s.tunnel.lastError.code}: {s.tunnel.lastError.message}
          </div>
        ) : null}
        {retryAt !== null || probe ? (
          <div className="tunnel-meta">
            {probe?.ok ? <span data-testid="tunnel-probe" data-value={probe.latencyMs}>probe {Math.round(probe.latencyMs)} ms</span> : null}
            {retryAt !== null ? (
              <span data-testid="tunnel-retry" data-value={retryAt}>
                {probe?.ok ? ' · ' : ''}listener kept · SSH retry {formatUntil(retryAt, now)}
              </span>
            ) : null}
          </div>
        ) : null}
        <TunnelTest label={label} serviceId={s.id} last={s.tunnel.lastTest ?? null} />
      </td>
      <td className="col-state">
        <div className="badges">
          {/* A server loading its model has no sleep state to show yet: the loading badge says what it is doing. */}
          {loading ? null : (
            <Badge tone={sleep.tone} testId="sleep-state" value={s.sleep} title={sleep.title}>
              {sleep.text}
            </Badge>
          )}
          <Badge tone={HEALTH_TONE[s.health]} testId="health" value={s.health} title={loading?.title}>
            {HEALTH_TEXT[s.health]}
          </Badge>
        </div>
        {loading ? (
          <div className="state-note" data-testid="loading-note" title={loading.title}>
            {loading.note}
            {loading.since ? <div data-testid="loading-since">{loading.since}</div> : null}
          </div>
        ) : sleep.note ? (
          <div className="state-note" data-testid="sleep-note" title={sleep.title}>
            {sleep.note}
          </div>
        ) : null}
      </td>
      <td className="col-num num">
        <span data-testid="running" data-value={dataValue(s.requestsRunning)}>
          {formatCount(s.requestsRunning)}
        </span>
        <span className="muted"> / </span>
        <span data-testid="waiting" data-value={dataValue(s.requestsWaiting)} className={s.requestsWaiting ? 'text-warn' : undefined}>
          {formatCount(s.requestsWaiting)}
        </span>
      </td>
      <td className="col-kv">
        <MeterBar
          pct={s.kvCachePct}
          text={formatPct(s.kvCachePct, s.kvCachePct !== null && s.kvCachePct < 10 ? 1 : 0)}
          label={s.kvCacheEstimated ? 'KV cache, estimated (context in use ÷ n_ctx, from /slots)' : 'KV cache'}
          testId="kv-pct"
        />
        {s.kvCacheEstimated && s.kvCachePct !== null ? (
          <div className="kv-est" data-testid="kv-estimated" title={KV_ESTIMATE_TITLE}>
            est. · /slots
          </div>
        ) : null}
      </td>
      <td className="col-num num" data-testid="tokps" data-value={dataValue(s.generationTokensPerS)} title={rateBasisTitle(s, 'Generation tokens per second')}>
        {formatTokPerS(s.generationTokensPerS)}
      </td>
      <td className="col-num col-prompt num" data-testid="prompt-tokps" data-value={dataValue(s.promptTokensPerS)} title={rateBasisTitle(s, 'Prompt tokens per second')}>
        {formatTokPerS(s.promptTokensPerS)}
      </td>
      <td className="col-num num">
        <TtftCell host={label} serviceId={s.id} kind={s.kind} />
      </td>
      <td className="col-num col-cost num">
        <LiveFigure
          host={label}
          metric={serviceSeries(s.id, 'cost_usd_per_mtok')}
          testId="cost-per-mtok"
          format={formatUsdPerMTok}
          unavailable="unavailable"
          title="Estimated cost per 1M output tokens: host price × this model's share of busy time ÷ its tokens, last 5 minutes"
        />
      </td>
      <td className="col-spark">
        <TokSparkline label={label} serviceId={s.id} />
      </td>
    </tr>
  );
});
