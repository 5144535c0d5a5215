// "nvidia-smi · 1 s ago" beside a group of figures; warning colour once the
// reading is older than a few polls. Re-renders on the shared one-second clock.
import type { FigureSource } from '../../../src-preload/contract/index.js';
import { sourceLine } from '../format/source.js';
import { useSharedNow } from './use-now.js';

export interface SourceLineProps {
  readonly source: FigureSource;
  /** The console's poll interval (null: not measured yet, the default is assumed). */
  readonly pollIntervalMs: number | null;
  readonly testId?: string;
  /** What the figures are, for screen readers ("GPU figures"). */
  readonly subject: string;
}

export function SourceLine({ source, pollIntervalMs, testId, subject }: SourceLineProps): React.JSX.Element {
  const now = useSharedNow();
  const line = sourceLine(source, now, pollIntervalMs);
  return (
    <span
      className={`source-line source-line--${line.tone}`}
      data-testid={testId}
      data-kind={source.kind}
      data-tone={line.tone}
      data-age-ms={line.ageMs ?? ''}
      title={line.title}
    >
      <span className="visually-hidden">{subject} from </span>
      {line.tone === 'old' ? <span aria-hidden="true">⚠ </span> : null}
      {line.text}
      {line.tone === 'old' ? <span className="visually-hidden"> (out of date)</span> : null}
    </span>
  );
}
