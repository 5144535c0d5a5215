// Gate counts as words and numbers (pass / fail / pending / unverified), the
// colour only repeating what the word says.
import { Badge } from '../../components/Badge.js';
import { GATE_ORDER, GATE_TONE, type GateCounts } from './report-format.js';

export function GateSummary({ counts, testId }: { counts: GateCounts; testId?: string }): React.JSX.Element {
  return (
    <span className="badges reports-gate-summary" data-testid={testId}>
      {GATE_ORDER.map((s) => (
        <Badge key={s} tone={counts[s] > 0 ? GATE_TONE[s] : 'neutral'} value={String(counts[s])} testId={testId ? `${testId}-${s}` : undefined}>
          {counts[s]} {s}
        </Badge>
      ))}
    </span>
  );
}
