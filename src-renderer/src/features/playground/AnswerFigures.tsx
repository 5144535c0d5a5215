// An answer's figures: TTFT, tokens per second (and over what), the replica
// that answered, total and queue time, tokens, and the way to its request row.
// Unknown is said, never shown as 0.
import type { Exchange } from './playground-store.js';
import { DASH, formatCount, formatTokPerS } from '../../format/format.js';
import { formatMs } from '../proxy/proxy-format.js';

export function AnswerFigures({ x, onOpenRequest }: { x: Exchange; onOpenRequest: (requestId: string) => void }): React.JSX.Element {
  const a = x.answer;
  const tokPerSTitle =
    a === null
      ? undefined
      : a.tokensPerSBasis === 'decode'
        ? 'Completion tokens after the first, over the time from the first to the last streamed chunk (from the usage block)'
        : a.tokensPerSBasis === 'end_to_end'
          ? 'Completion tokens over the whole answer, queue and prompt included (unstreamed: no first-token time)'
          : a.completionTokens === null
            ? 'Unknown: the server sent no usage block'
            : 'Unknown: too few tokens or no time between chunks to measure';
  return (
    <dl className="playground-figures" data-testid="playground-figures">
      <Figure label="TTFT" value={a ? (a.ttftMs === null ? (a.stream ? DASH : 'not streamed') : formatMs(a.ttftMs)) : DASH} testId="playground-ttft" title="From sending to the first content chunk, queue wait included" />
      <Figure label={a?.tokensPerSBasis === 'end_to_end' ? 'tok/s (end to end)' : 'tok/s'} value={a?.tokensPerS == null ? 'unknown' : formatTokPerS(a.tokensPerS)} testId="playground-tok-s" title={tokPerSTitle} />
      <Figure label="Upstream" value={x.upstream ?? DASH} testId="playground-upstream" title="The replica (host/service) that answered, from the proxy's X-Upstream" />
      <Figure label="Total" value={a ? formatMs(a.totalMs) : DASH} testId="playground-total" />
      <Figure label="Queue" value={a ? formatMs(a.queueMs) : DASH} testId="playground-queue" title="The proxy's X-Queue-Ms" />
      <Figure label="Tokens in / out" value={a ? `${formatCount(a.promptTokens)} / ${formatCount(a.completionTokens)}` : DASH} testId="playground-tokens" />
      {a?.maxTokensNote ? <Figure label="max_tokens" value={a.maxTokensNote} testId="playground-max-tokens-note" title="What the proxy did to max_tokens (the model's default or ceiling)" /> : null}
      <div className="playground-figure">
        <dt>Request</dt>
        <dd>
          {x.requestId ? (
            <button type="button" className="playground-link" onClick={() => onOpenRequest(x.requestId!)} data-testid="playground-request-link" title="Show this request's row in the Proxy view">
              {x.requestId}
            </button>
          ) : (
            DASH
          )}
        </dd>
      </div>
    </dl>
  );
}

function Figure({ label, value, testId, title }: { label: string; value: string; testId: string; title?: string }): React.JSX.Element {
  return (
    <div className="playground-figure" title={title}>
      <dt>{label}</dt>
      <dd className="num" data-testid={testId}>
        {value}
      </dd>
    </div>
  );
}
