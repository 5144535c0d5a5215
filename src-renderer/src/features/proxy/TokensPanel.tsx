// Client tokens: create (the token is shown once), list, revoke with confirmation.
import { useCallback, useEffect, useState } from 'react';
import type { TokenView, TrafficClass } from '../../../../src-preload/contract/index.js';
import { useServices } from '../../app/app-context.js';
import { Badge } from '../../components/Badge.js';
import { CopyButton } from '../../components/CopyButton.js';
import { toContractError } from '../../transport/transport.js';
import { formatTime } from '../../format/format.js';

export function TokensPanel(): React.JSX.Element {
  const { transport } = useServices();
  const [tokens, setTokens] = useState<TokenView[] | null>(null);
  const [name, setName] = useState('');
  const [maxClass, setMaxClass] = useState<TrafficClass>('interactive');
  const [created, setCreated] = useState<{ name: string; token: string } | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  const load = useCallback(() => {
    transport.invoke('proxy.listTokens', {}).then(
      (out) => setTokens(out.tokens),
      (err: unknown) => setError(toContractError(err).message),
    );
  }, [transport]);
  useEffect(() => load(), [load]);

  const create = (e: React.FormEvent): void => {
    e.preventDefault();
    setError(null);
    transport.invoke('proxy.createToken', { name: name.trim(), maxClass }).then(
      (out) => {
        setCreated({ name: out.view.name, token: out.token });
        setName('');
        load();
      },
      (err: unknown) => setError(toContractError(err).message),
    );
  };

  const revoke = (tokenName: string): void => {
    setError(null);
    transport.invoke('proxy.revokeToken', { name: tokenName }).then(
      () => {
        setConfirming(null);
        load();
      },
      (err: unknown) => setError(toContractError(err).message),
    );
  };

  return (
    <section className="panel tokens-panel" aria-label="Client tokens" data-testid="tokens-panel">
      <h3 className="panel__title">Client tokens</h3>
      <form className="token-form" onSubmit={create}>
        <input
          aria-label="Token name"
          placeholder="name, e.g. chat-app"
          value={name}
          onChange={(e) => setName(e.target.value)}
          pattern="[A-Za-z0-9][A-Za-z0-9._\-]{0,63}"
          required
          data-testid="token-name"
        />
        <select aria-label="Highest class" value={maxClass} onChange={(e) => setMaxClass(e.target.value as TrafficClass)} data-testid="token-class">
          <option value="interactive">interactive</option>
          <option value="system">system</option>
          <option value="batch">batch</option>
        </select>
        <button type="submit" className="button button--primary" data-testid="token-create">
          Create
        </button>
      </form>
      {created ? (
        <div className="token-created" role="status" data-testid="token-created">
          <div>
            Token for <strong>{created.name}</strong> — shown once; copy it now:
          </div>
          <div className="token-created__value">
            <code data-testid="token-value">{created.token}</code>
            <CopyButton text={created.token} label="Copy token" />
            <button type="button" className="button button--ghost" onClick={() => setCreated(null)}>
              Done
            </button>
          </div>
        </div>
      ) : null}
      {error ? (
        <p className="inline-error" role="alert">
          {error}
        </p>
      ) : null}
      {tokens === null ? (
        <p className="muted panel__empty">Loading tokens…</p>
      ) : tokens.length === 0 ? (
        <p className="muted panel__empty">No tokens yet. Clients need one (or the loopback switch in the config).</p>
      ) : (
        <div className="table-scroll">
        <table className="data-table token-table">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Class ≤</th>
              <th scope="col">Prefix</th>
              <th scope="col">Last used</th>
              <th scope="col" aria-label="Actions" />
            </tr>
          </thead>
          <tbody>
            {tokens.map((t) => (
              <tr key={`${t.name}-${t.prefix}`} data-testid={`token-${t.name}`} className={t.revokedAt ? 'is-stale' : undefined}>
                <td>{t.name}</td>
                <td>{t.maxClass}</td>
                <td>
                  <code>{t.prefix}…</code>
                </td>
                <td className="muted">{t.lastUsedAt ? formatTime(t.lastUsedAt) : '—'}</td>
                <td className="token-actions">
                  {t.revokedAt ? (
                    <Badge tone="neutral">revoked</Badge>
                  ) : confirming === t.name ? (
                    <>
                      <button type="button" className="button button--danger" onClick={() => revoke(t.name)} data-testid={`token-revoke-confirm-${t.name}`}>
                        Revoke {t.name}
                      </button>
                      <button type="button" className="button button--ghost" onClick={() => setConfirming(null)}>
                        Keep
                      </button>
                    </>
                  ) : (
                    <button type="button" className="button button--ghost" onClick={() => setConfirming(t.name)} data-testid={`token-revoke-${t.name}`}>
                      Revoke…
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        </div>
      )}
    </section>
  );
}
