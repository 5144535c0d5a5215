// Client tokens: create (the token is shown once, optionally with limits), list
// with the limits in force, change a token's limits, revoke with confirmation.
// A refusal from the core is shown with its code and the form keeps what was typed.
import { useCallback, useEffect, useState } from 'react';
import type { ContractError, TokenView, TrafficClass } from '../../../../src-preload/contract/index.js';
import { useAppStore, useServices } from '../../app/app-context.js';
import { Badge } from '../../components/Badge.js';
import { CopyButton } from '../../components/CopyButton.js';
import { toContractError } from '../../transport/transport.js';
import { formatTime } from '../../format/format.js';
import './clients.css';
import { limitsText } from './client-usage-view.js';
import { TokenLimitsFields } from './TokenLimitsForm.js';
import { EMPTY_LIMITS_FORM, formFromLimits, limitsRequest, modelChoices, type LimitsFormState } from './token-limits-form.js';

const TOKENS_REFRESH_MS = 15_000;

function CodedError({ error }: { error: ContractError | string | null }): React.JSX.Element | null {
  if (error === null) return null;
  return (
    <p className="inline-error" role="alert" data-testid="token-error">
      {typeof error === 'string' ? error : (
        <>
          {error.message} <code>{error.code}</code>
        </>
      )}
    </p>
  );
}

export function TokensPanel(): React.JSX.Element {
  const { transport } = useServices();
  const routes = useAppStore((s) => s.proxy.stats?.models);
  const [tokens, setTokens] = useState<TokenView[] | null>(null);
  const [name, setName] = useState('');
  const [maxClass, setMaxClass] = useState<TrafficClass>('interactive');
  const [withLimits, setWithLimits] = useState(false);
  const [createLimits, setCreateLimits] = useState<LimitsFormState>(EMPTY_LIMITS_FORM);
  const [created, setCreated] = useState<{ name: string; token: string } | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);
  const [editing, setEditing] = useState<{ name: string; state: LimitsFormState } | null>(null);
  const [error, setError] = useState<ContractError | string | null>(null);

  const load = useCallback(() => {
    transport.invoke('proxy.listTokens', {}).then(
      (out) => setTokens(out.tokens),
      (err: unknown) => setError(toContractError(err)),
    );
  }, [transport]);
  // Tokens made or revoked elsewhere (the CLI, another window) show up without a reload.
  useEffect(() => {
    load();
    const timer = setInterval(load, TOKENS_REFRESH_MS);
    return () => clearInterval(timer);
  }, [load]);

  const create = (e: React.FormEvent): void => {
    e.preventDefault();
    setError(null);
    const request = withLimits ? limitsRequest(createLimits, null, []) : ({ ok: true, patch: {} } as const);
    if (!request.ok) return setError(request.problem);
    const limits = Object.keys(request.patch).length > 0 ? { limits: request.patch } : {};
    transport.invoke('proxy.createToken', { name: name.trim(), maxClass, ...limits }).then(
      (out) => {
        setCreated({ name: out.view.name, token: out.token });
        setName('');
        setCreateLimits(EMPTY_LIMITS_FORM);
        setWithLimits(false);
        load();
      },
      (err: unknown) => setError(toContractError(err)),
    );
  };

  const save = (token: TokenView, state: LimitsFormState): void => {
    setError(null);
    const request = limitsRequest(state, token.limits, token.configFields);
    if (!request.ok) return setError(request.problem);
    transport.invoke('proxy.setToken', { name: token.name, limits: request.patch }).then(
      () => {
        setEditing(null);
        load();
      },
      (err: unknown) => setError(toContractError(err)),
    );
  };

  const revoke = (tokenName: string): void => {
    setError(null);
    transport.invoke('proxy.revokeToken', { name: tokenName }).then(
      () => {
        setConfirming(null);
        load();
      },
      (err: unknown) => setError(toContractError(err)),
    );
  };

  const editedToken = editing ? (tokens?.find((t) => t.name === editing.name && t.revokedAt === null) ?? null) : null;

  return (
    <section className="panel tokens-panel" aria-label="Client tokens" data-testid="tokens-panel">
      <h3 className="panel__title">Client tokens</h3>
      <form className="token-form" onSubmit={create} aria-label="New token">
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
        <button type="button" className="button button--ghost" aria-expanded={withLimits} onClick={() => setWithLimits(!withLimits)} data-testid="token-limits-toggle">
          Limits…
        </button>
        <button type="submit" className="button button--primary" data-testid="token-create">
          Create
        </button>
      </form>
      {withLimits ? (
        <div className="token-limits" role="group" aria-label="Limits of the new token" data-testid="token-create-limits">
          <TokenLimitsFields idPrefix="new-limits" state={createLimits} onChange={setCreateLimits} choices={modelChoices(routes, createLimits.models)} configFields={[]} tokenName={name.trim()} />
          <p className="token-limits__hint">Applied when you press Create. Fields config sets for this name are refused; set them there.</p>
        </div>
      ) : null}
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
      <CodedError error={error} />
      {editing && editedToken ? (
        <form
          className="token-limits"
          aria-label={`Limits of ${editing.name}`}
          data-testid="token-edit-limits"
          onSubmit={(e) => {
            e.preventDefault();
            save(editedToken, editing.state);
          }}
        >
          <p className="token-limits__title">Limits of {editing.name}</p>
          <TokenLimitsFields idPrefix="edit-limits" state={editing.state} onChange={(state) => setEditing({ name: editing.name, state })} choices={modelChoices(routes, editing.state.models)} configFields={editedToken.configFields} tokenName={editing.name} />
          <div className="token-limits__actions">
            <button type="submit" className="button button--primary" data-testid="token-limits-save">
              Save limits
            </button>
            <button type="button" className="button button--ghost" onClick={() => setEditing(null)}>
              Cancel
            </button>
          </div>
        </form>
      ) : null}
      {tokens === null ? (
        <p className="muted panel__empty">Loading tokens…</p>
      ) : tokens.length === 0 ? (
        <p className="muted panel__empty">No tokens yet. Clients need one (or the loopback switch in the config).</p>
      ) : (
        <TokenTable tokens={tokens} confirming={confirming} setConfirming={setConfirming} revoke={revoke} edit={(t) => setEditing({ name: t.name, state: formFromLimits(t.limits) })} />
      )}
    </section>
  );
}

interface TokenTableProps {
  tokens: readonly TokenView[];
  confirming: string | null;
  setConfirming: (name: string | null) => void;
  revoke: (name: string) => void;
  edit: (token: TokenView) => void;
}

function TokenTable({ tokens, confirming, setConfirming, revoke, edit }: TokenTableProps): React.JSX.Element {
  return (
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
          {tokens.map((t) => {
            const limits = limitsText(t);
            return (
              <tr key={`${t.name}-${t.prefix}`} data-testid={`token-${t.name}`} className={t.revokedAt ? 'is-stale' : undefined}>
                <td>
                  {t.name}
                  {limits.length > 0 ? (
                    <div className="muted token-table__limits" data-testid={`token-limits-${t.name}`}>
                      {limits.join(' · ')}
                    </div>
                  ) : null}
                </td>
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
                    <>
                      <button type="button" className="button button--ghost" onClick={() => edit(t)} aria-label={`Limits of ${t.name}`} data-testid={`token-edit-${t.name}`}>
                        Limits…
                      </button>
                      <button type="button" className="button button--ghost" onClick={() => setConfirming(t.name)} data-testid={`token-revoke-${t.name}`}>
                        Revoke…
                      </button>
                    </>
                  )}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
