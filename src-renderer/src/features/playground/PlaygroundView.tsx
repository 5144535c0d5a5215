// The Playground view: try a model or group through the proxy after a wake,
// restart or config change, and see how it answered (issue #32 item 6).
// Ctrl+Enter (⌘+Enter) sends; Stop closes the request.
import { useState } from 'react';
import { useStore } from 'zustand';
import { PlaygroundErrorCode } from '../../../../src-preload/contract/index.js';
import { useAppStore, useServices } from '../../app/app-context.js';
import { Conversation } from './Conversation.js';
import { SettingsForm } from './SettingsForm.js';
import { createPlaygroundStore, type PlaygroundStore } from './playground-store.js';
import type { Transport } from '../../transport/transport.js';
import './playground.css';

// One panel state per transport, kept while the operator looks elsewhere (a request link to the
// Proxy view and back keeps the conversation; an answer in flight goes on and lands here).
const stores = new WeakMap<Transport, PlaygroundStore>();

function storeFor(transport: Transport): PlaygroundStore {
  let store = stores.get(transport);
  if (!store) {
    store = createPlaygroundStore({ transport });
    stores.set(transport, store);
  }
  return store;
}

export function PlaygroundView(): React.JSX.Element {
  const { transport } = useServices();
  const [store] = useState<PlaygroundStore>(() => storeFor(transport));
  const openRequest = useAppStore((s) => s.showRequest);
  return (
    <section className="playground" aria-labelledby="playground-title" data-testid="playground-view">
      <div className="view-title">
        <h1 id="playground-title">Playground</h1>
        <p className="muted">Ask a model through the proxy, as a client would, and see its time to first token, its speed and the replica that answered.</p>
      </div>
      <div className="playground-grid">
        <SettingsForm store={store} />
        <section className="panel playground-chat" aria-label="Chat">
          <h2 className="panel__title">Chat</h2>
          <Conversation store={store} onOpenRequest={openRequest} />
          <Composer store={store} />
        </section>
      </div>
    </section>
  );
}

function Composer({ store }: { store: PlaygroundStore }): React.JSX.Element {
  const draft = useStore(store, (s) => s.draft);
  const running = useStore(store, (s) => s.running !== null);
  const refusal = useStore(store, (s) => s.refusal);
  const empty = useStore(store, (s) => s.exchanges.length === 0);
  const { setDraft, send, stop, clear } = store.getState();
  return (
    <div className="playground-compose">
      {refusal ? (
        <p className="inline-error" role="alert" data-testid="playground-refusal" data-code={refusal.code}>
          <code>{refusal.code}</code> {refusal.message}
          {refusal.code === PlaygroundErrorCode.MODEL_SLEEPING ? <span> (Fleet view: the host card&apos;s Wake button.)</span> : null}
        </p>
      ) : null}
      <label htmlFor="playground-prompt" className="playground-field">
        Message
      </label>
      <textarea
        id="playground-prompt"
        rows={3}
        value={draft}
        onChange={(e) => setDraft(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) {
            e.preventDefault();
            void send();
          }
        }}
        aria-describedby="playground-keys"
        placeholder="Ask the model something…"
        data-testid="playground-prompt"
      />
      <div className="playground-compose__actions">
        <span id="playground-keys" className="muted playground-compose__keys">
          Ctrl+Enter sends
        </span>
        <button type="button" className="button button--ghost" onClick={clear} disabled={running || empty} data-testid="playground-clear">
          Clear
        </button>
        {running ? (
          <button type="button" className="button button--danger" onClick={stop} data-testid="playground-stop">
            Stop
          </button>
        ) : (
          <button type="button" className="button button--primary" onClick={() => void send()} data-testid="playground-send">
            Send
          </button>
        )}
      </div>
    </div>
  );
}
