// The exchanges of this panel, oldest first: the operator's prompt, the
// answer as it streams, then its figures, or what went wrong, named by code.
import { useStore } from 'zustand';
import { Badge } from '../../components/Badge.js';
import { AnswerFigures } from './AnswerFigures.js';
import type { Exchange, PlaygroundStore } from './playground-store.js';

export function Conversation({ store, onOpenRequest }: { store: PlaygroundStore; onOpenRequest: (requestId: string) => void }): React.JSX.Element {
  const exchanges = useStore(store, (s) => s.exchanges);
  if (exchanges.length === 0) {
    return (
      <p className="muted panel__empty" data-testid="playground-empty">
        Ask something to see the answer, its time to first token, its speed and the replica that answered.
      </p>
    );
  }
  return (
    <ol className="playground-turns" aria-label="Conversation">
      {exchanges.map((x) => (
        <li key={x.runId} className="playground-exchange" data-testid="playground-exchange" data-status={x.status}>
          <div className="playground-turn playground-turn--user">
            <span className="playground-turn__who">You</span>
            <p className="playground-turn__text">{x.prompt}</p>
          </div>
          <div className="playground-turn playground-turn--model" aria-busy={x.status === 'running'}>
            <span className="playground-turn__who">
              {x.answer?.model ?? 'Model'} <StatusBadge x={x} />
            </span>
            {x.text !== '' ? (
              <p className="playground-turn__text" data-testid="playground-answer">
                {x.text}
              </p>
            ) : x.status === 'running' ? (
              <p className="muted playground-turn__text">Waiting for the first token…</p>
            ) : null}
            <Problem x={x} />
            {x.status !== 'running' || x.requestId !== null ? <AnswerFigures x={x} onOpenRequest={onOpenRequest} /> : null}
          </div>
        </li>
      ))}
    </ol>
  );
}

function StatusBadge({ x }: { x: Exchange }): React.JSX.Element | null {
  if (x.status === 'running') return <Badge tone="info">answering</Badge>;
  if (x.status === 'stopped') return <Badge tone="warn">stopped</Badge>;
  if (x.status === 'failed') return <Badge tone="error">failed</Badge>;
  if (x.answer?.error) return <Badge tone="warn">cut short</Badge>;
  return null;
}

/** A refusal or failure as the proxy or server gave it: HTTP status, wire code, message, Retry-After. */
function Problem({ x }: { x: Exchange }): React.JSX.Element | null {
  const e = x.answer?.error;
  if (x.status === 'stopped') return <p className="muted playground-problem">Stopped: the request was closed (the proxy records the client gone).</p>;
  if (x.error) {
    return (
      <p className="inline-error playground-problem" role="alert" data-testid="playground-problem" data-code={x.error.code}>
        <code>{x.error.code}</code> {x.error.message}
      </p>
    );
  }
  if (!e) return null;
  const status = x.answer?.status !== null && x.answer?.status !== undefined && x.answer.status >= 400 ? `HTTP ${x.answer.status} ` : '';
  return (
    <p className="inline-error playground-problem" role="alert" data-testid="playground-problem" data-code={e.code}>
      {status}
      <code>{e.code}</code> {e.message}
      {e.retryAfterS !== null ? <span className="playground-problem__retry"> · retry after {e.retryAfterS} s</span> : null}
      {e.inStream ? <span className="playground-problem__retry"> · inside the stream</span> : null}
    </p>
  );
}
