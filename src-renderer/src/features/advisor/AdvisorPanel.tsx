// The parallelism advisor in the proxy view: recommendations with the figures behind
// them, applied only by a person (a confirmation showing the exact caps change), or
// rejected; when there is none, each upstream says why (balanced, not enough traffic…).
import { useCallback, useEffect, useState } from 'react';
import { AdvisorListSchema, type AdvisorList, type Recommendation } from '../../../../src-preload/contract/index.js';
import { useServices } from '../../app/app-context.js';
import { toContractError } from '../../transport/transport.js';
import { ApplyAdviceDialog } from './ApplyAdviceDialog.js';
import { RecommendationCard } from './RecommendationCard.js';
import { emptyReason, verdictLine, windowWords } from './advice-text.js';

export function AdvisorPanel(): React.JSX.Element {
  const { transport } = useServices();
  const [list, setList] = useState<AdvisorList | null>(null);
  const [applying, setApplying] = useState<Recommendation | null>(null);
  const [error, setError] = useState<string | null>(null);

  const load = useCallback(() => {
    transport.invoke('advisor.list', {}).then(
      (out) => {
        setList(out);
        setError(null);
      },
      (err: unknown) => setError(toContractError(err).message),
    );
  }, [transport]);
  useEffect(() => {
    load();
    return transport.on('advisor.changed', (payload) => {
      const parsed = AdvisorListSchema.safeParse(payload);
      if (parsed.success) setList(parsed.data);
    });
  }, [transport, load]);

  const window = list ? windowWords(list.windowMs) : '15 min';
  const quiet = list ? list.upstreams.filter((u) => u.verdict !== 'recommendation') : [];
  return (
    <section className="panel advisor-panel" aria-labelledby="advisor-title" data-testid="advisor-panel">
      <h3 id="advisor-title" className="panel__title">
        Advisor <span className="muted">— recommendations from the last {window}; nothing changes until you apply one</span>
      </h3>
      {error ? (
        <p className="inline-error" role="alert">
          {error}
        </p>
      ) : null}
      {list === null ? (
        <p className="muted panel__empty">Loading advice…</p>
      ) : (
        <>
          {list.recommendations.length === 0 ? (
            <p className="panel__empty" data-testid="advisor-empty">
              No recommendation: {emptyReason(list)}.
            </p>
          ) : (
            list.recommendations.map((rec) => <RecommendationCard key={rec.id} rec={rec} onApply={() => setApplying(rec)} onDone={load} />)
          )}
          {quiet.length > 0 ? (
            <ul className="advisor-panel__quiet" aria-label="Upstreams without advice" data-testid="advisor-verdicts">
              {quiet.map((u) => (
                <li key={u.upstream} data-verdict={u.verdict}>
                  <code>{u.upstream}</code> — {verdictLine(u.verdict, u.because[0] ?? '')}
                </li>
              ))}
            </ul>
          ) : null}
        </>
      )}
      {applying ? (
        <ApplyAdviceDialog
          rec={applying}
          onClose={() => {
            setApplying(null);
            load();
          }}
        />
      ) : null}
    </section>
  );
}
