// The host's key is encrypted, or the host asks a question while ssh waits (a
// one-time code): the answer goes to main once; a passphrase stays in its
// memory only. The field is cleared as soon as it is sent.
import { useState } from 'react';
import type { CredentialPrompt } from '../../../../src-preload/contract/index.js';
import { useServices } from '../../app/app-context.js';
import { useCall } from './use-call.js';
import './hosts.css';

export function PassphrasePrompt({ label, prompt }: { readonly label: string; readonly prompt: CredentialPrompt }): React.JSX.Element {
  const { store } = useServices();
  const [value, setValue] = useState('');
  const call = useCall('hosts.passphrase');
  const decline = useCall('hosts.declinePrompt');
  const submit = (e: React.FormEvent): void => {
    e.preventDefault();
    if (!value) return;
    const passphrase = value;
    setValue('');
    void call.run({ label, passphrase }).then((out) => {
      if (out) store.getState().applyHostStatus({ label: out.label, state: out.state, message: null });
    });
  };
  return (
    <form className="passphrase-prompt" onSubmit={submit} data-testid={`passphrase-prompt-${label}`}>
      <label htmlFor={`pp-${label}`} className="passphrase-prompt__label">
        {prompt.kind === 'prompt' ? (
          <>
            {/* The host's own words: a host can ask anything, a passphrase included; the console never asks this way. */}
            The host {label} asks (its own question, not GPU Console&apos;s): <q data-testid="host-prompt-text">{prompt.text.trim()}</q>
          </>
        ) : (
          <>
            {prompt.reason === 'incorrect' ? 'That passphrase did not open ' : 'Passphrase for '}
            <code>{prompt.keyFile}</code>
          </>
        )}
      </label>
      <input
        id={`pp-${label}`}
        type="password"
        autoComplete="off"
        spellCheck={false}
        className="passphrase-prompt__input"
        value={value}
        onChange={(e) => setValue(e.target.value)}
        data-testid="passphrase-input"
      />
      <button type="submit" className="button button--primary" disabled={call.pending || value === ''} data-testid="passphrase-submit">
        {prompt.kind === 'prompt' ? (call.pending ? 'Sending…' : 'Answer') : call.pending ? 'Unlocking…' : 'Unlock and connect'}
      </button>
      {prompt.kind === 'prompt' ? (
        <button type="button" className="button" disabled={decline.pending || call.pending} onClick={() => void decline.run({ label })} data-testid="prompt-decline">
          Decline
        </button>
      ) : null}
      <span className="muted passphrase-prompt__note">
        {prompt.kind === 'prompt' ? 'ssh waits for this answer; it is passed on once and never stored' : 'kept in memory until the console exits; never stored'}
      </span>
      {call.error || decline.error ? (
        <span className="inline-error" role="alert">
          {call.error ?? decline.error}
        </span>
      ) : null}
    </form>
  );
}
