// One host in the overview: state (a glyph whose shape differs per tone, and
// words), its GPUs, services up, requests, tokens/s, run rate, open alerts
// and — when something is wrong — the reason in words. A button: click or
// Enter opens the host's card.
import { memo } from 'react';
import { formatCount, formatTemp, formatTokPerS, formatUsdPerHour } from '../../../format/format.js';
import { GpuStrip } from './GpuStrip.js';
import type { OverviewRow } from './overview-row.js';
import { tileTone, TONE_GLYPH, shortText } from './tile-text.js';

export interface OverviewTileProps {
  readonly row: OverviewRow;
  /** The tile's place (a host grouped by model may have two). */
  readonly tileKey: string;
  /** Characters that fit on one line of the tile (use-line-chars.ts). */
  readonly lineChars: number;
  readonly focused: boolean;
  readonly onOpen: (label: string, tileKey: string) => void;
  readonly onFocusTile: (tileKey: string) => void;
}

export const OverviewTile = memo(function OverviewTile({ row, tileKey, lineChars, focused, onOpen, onFocusTile }: OverviewTileProps): React.JSX.Element {
  const tone = tileTone(row);
  const reason = row.troubles.map((t) => t.text).join(' · ');
  // One line: the worst reason, and how many more (all of them in the title, the hidden text and the card).
  const more = row.troubles.length > 1 ? ` +${row.troubles.length - 1}` : '';
  const reasonLine = row.troubles.length === 0 ? '' : `${shortText(row.troubles[0]!.text, lineChars - more.length)}${more}`;
  // Values only on the tile ("kl · r2"); names and values in the title.
  const tags = Object.values(row.tags).join(' · ');
  const tagsTitle = Object.entries(row.tags)
    .map(([k, v]) => `${k}: ${v}`)
    .join(', ');
  const gpuSummary = `${row.host.gpus.length} GPUs, VRAM ${row.vramPct === null ? 'unknown' : `${Math.round(row.vramPct)} %`}, util ${row.utilPct === null ? 'unknown' : `${Math.round(row.utilPct)} %`}, hottest ${formatTemp(row.hottestC)}`;
  return (
    <button
      type="button"
      className={`ov-tile ov-tile--${tone}`}
      data-testid={`ov-tile-${row.label}`}
      data-rank={row.rank}
      data-reason={reason}
      tabIndex={focused ? 0 : -1}
      title={reason === '' ? row.label : `${row.label}: ${reason}`}
      onClick={() => onOpen(row.label, tileKey)}
      onFocus={() => onFocusTile(tileKey)}
    >
      <span className="ov-tile__head">
        <span className={`ov-glyph ov-glyph--${tone}`} aria-hidden="true">
          {TONE_GLYPH[tone]}
        </span>
        <span className="ov-tile__label">{row.label}</span>
        <span className="visually-hidden">, {row.state}</span>
        {row.alerts.open > 0 ? (
          <span className={`ov-tile__alerts${row.alerts.critical > 0 ? ' ov-tile__alerts--critical' : ''}`} data-testid="ov-alerts">
            <span aria-hidden="true">⚑</span>
            {row.alerts.open}
            <span className="visually-hidden"> open alert{row.alerts.open === 1 ? '' : 's'}</span>
          </span>
        ) : null}
      </span>
      <span className="ov-tile__gpus">
        <GpuStrip gpus={row.host.gpus} />
        <span className="num ov-tile__temp" aria-hidden="true">
          {row.hottestC === null ? '—' : `${Math.round(row.hottestC)}°`}
        </span>
        <span className="visually-hidden">{gpuSummary}</span>
      </span>
      <span className="ov-tile__line num">
        {row.servicesUp}/{row.servicesTotal} up · {formatCount(row.running)} run · {formatCount(row.waiting)} wait
      </span>
      <span className="ov-tile__line num">
        {formatTokPerS(row.tokS)} tok/s · {formatUsdPerHour(row.pricePerHour)}
      </span>
      {reason !== '' ? (
        <span className="ov-tile__reason" data-testid="ov-reason">
          <span aria-hidden="true">{reasonLine}</span>
          <span className="visually-hidden">{reason}</span>
        </span>
      ) : (
        <span className="ov-tile__tags muted" title={tagsTitle || undefined}>
          <span aria-hidden="true">{tags === '' ? ' ' : shortText(tags, lineChars)}</span>
          {tags === '' ? null : <span className="visually-hidden">tags {tagsTitle}</span>}
        </span>
      )}
    </button>
  );
});
