// The panel's list: fixed-height rows, only those in view drawn (a 5,000-line
// list and a fast follow cost one screenful), stuck to the bottom while the
// operator is there; scrolled up, new lines are counted on a button that
// jumps back down.
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'react';
import type { LogEntry } from '../../../../src-preload/contract/index.js';
import { formatTime, isoLocal } from '../../format/format.js';
import { failureWords, markerWords, visibleRows } from './logs-format.js';

export const LOG_ROW_PX = 20;

export interface LogListProps {
  entries: readonly LogEntry[];
  /** Entries received in all (shown plus dropped past the bound): new lines are counted from it. */
  received: number;
  testIdPrefix: string;
}

function Row({ entry, top }: { entry: LogEntry; top: number }): React.JSX.Element {
  const style = { top, height: LOG_ROW_PX };
  if (entry.type === 'marker') {
    return (
      <div className={`logs-row logs-row--marker logs-row--${entry.marker}`} style={style} data-testid="log-marker" data-marker={entry.marker} role="note">
        {markerWords(entry)}
      </div>
    );
  }
  return (
    <div className={`logs-row${entry.failure ? ' logs-row--failure' : ''}${entry.stream === 'stderr' ? ' logs-row--stderr' : ''}`} style={style} data-testid="log-line" data-failure={entry.failure ?? undefined}>
      {entry.ts !== null ? (
        <time className="logs-ts" dateTime={isoLocal(entry.ts)}>
          {formatTime(entry.ts, { date: 'always' })}
        </time>
      ) : null}
      {entry.failure ? (
        <span className="badge badge--error logs-kind" data-testid="log-failure">
          {failureWords(entry.failure)}
        </span>
      ) : null}
      <span className="logs-text">
        {entry.text}
        {entry.cutBytes > 0 ? <span className="muted"> … ({entry.cutBytes} bytes cut)</span> : null}
      </span>
    </div>
  );
}

export function LogList({ entries, received, testIdPrefix }: LogListProps): React.JSX.Element {
  const ref = useRef<HTMLDivElement>(null);
  const [view, setView] = useState({ top: 0, height: 400 });
  const [stuck, setStuck] = useState(true);
  const [seenAt, setSeenAt] = useState(0);
  const frame = useRef<number | null>(null);

  const measure = useCallback(() => {
    const el = ref.current;
    if (!el) return;
    const atBottom = el.scrollTop + el.clientHeight >= el.scrollHeight - LOG_ROW_PX;
    setView({ top: el.scrollTop, height: el.clientHeight });
    setStuck(atBottom);
    if (atBottom) setSeenAt(received);
  }, [received]);

  const onScroll = useCallback(() => {
    if (frame.current !== null) return;
    frame.current = requestAnimationFrame(() => {
      frame.current = null;
      measure();
    });
  }, [measure]);

  useEffect(() => () => {
    if (frame.current !== null) cancelAnimationFrame(frame.current);
  }, []);

  // New entries: follow them down while stuck to the bottom.
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el || !stuck) return;
    el.scrollTop = el.scrollHeight;
    setView({ top: el.scrollTop, height: el.clientHeight });
    setSeenAt(received);
  }, [received, entries, stuck]);

  const jump = () => {
    const el = ref.current;
    if (!el) return;
    el.scrollTop = el.scrollHeight;
    setStuck(true);
    setSeenAt(received);
  };

  const { first, last } = visibleRows(view.top, view.height, LOG_ROW_PX, entries.length);
  const rows: React.JSX.Element[] = [];
  for (let i = first; i <= last; i++) rows.push(<Row key={i} entry={entries[i]!} top={i * LOG_ROW_PX} />);
  const unseen = stuck ? 0 : Math.max(0, received - seenAt);
  return (
    <div className="logs-list-wrap">
      <div className="logs-list" ref={ref} onScroll={onScroll} data-testid={`${testIdPrefix}-list`} tabIndex={0} aria-label="Log lines">
        <div className="logs-canvas" style={{ height: entries.length * LOG_ROW_PX }}>
          {rows}
        </div>
      </div>
      {unseen > 0 ? (
        <button type="button" className="logs-jump" onClick={jump} data-testid={`${testIdPrefix}-jump`}>
          {unseen} new line{unseen === 1 ? '' : 's'} ↓
        </button>
      ) : null}
    </div>
  );
}
