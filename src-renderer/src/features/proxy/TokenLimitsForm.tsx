// The fields of a token's limits: allowed models (names, aliases, groups the
// proxy serves), requests and tokens a minute, a monthly budget and what 100 %
// does, an expiry. Fields set by config are shown read-only and say so.
import type { TokenLimitField } from '../../../../src-preload/contract/index.js';
import type { LimitsFormState } from './token-limits-form.js';

export interface TokenLimitsFieldsProps {
  readonly idPrefix: string;
  readonly state: LimitsFormState;
  readonly onChange: (next: LimitsFormState) => void;
  readonly choices: readonly string[];
  /** Fields config `proxy.clients.<name>` sets: read-only here. */
  readonly configFields: readonly TokenLimitField[];
  readonly tokenName: string;
}

export function TokenLimitsFields({ idPrefix, state, onChange, choices, configFields, tokenName }: TokenLimitsFieldsProps): React.JSX.Element {
  const fromConfig = (f: TokenLimitField) => configFields.includes(f);
  const set = (change: Partial<LimitsFormState>) => onChange({ ...state, ...change });
  const note = (f: TokenLimitField) =>
    fromConfig(f) ? (
      <span className="token-limits__from-config" id={`${idPrefix}-${f}-config`}>
        set by config (proxy.clients.{tokenName || '<name>'}): change it there
      </span>
    ) : null;
  const described = (f: TokenLimitField) => (fromConfig(f) ? `${idPrefix}-${f}-config` : undefined);
  const toggle = (name: string, on: boolean) => set({ models: on ? [...state.models, name] : state.models.filter((m) => m !== name) });

  return (
    <>
      <fieldset className="token-limits__models" disabled={fromConfig('models')} aria-describedby={described('models')} data-testid={`${idPrefix}-models`}>
        <legend>Allowed models (none ticked: every model)</legend>
        {choices.length === 0 ? <span className="muted">The proxy lists no models yet.</span> : null}
        {choices.map((name) => (
          <label key={name}>
            <input type="checkbox" checked={state.models.includes(name)} onChange={(e) => toggle(name, e.target.checked)} data-testid={`${idPrefix}-model-${name}`} />
            {name}
          </label>
        ))}
        {note('models')}
      </fieldset>
      <label htmlFor={`${idPrefix}-rpm`}>Requests/min</label>
      <span>
        <input id={`${idPrefix}-rpm`} inputMode="numeric" placeholder="no limit" value={state.rpm} onChange={(e) => set({ rpm: e.target.value })} disabled={fromConfig('rpm')} aria-describedby={described('rpm')} data-testid={`${idPrefix}-rpm`} />{' '}
        {note('rpm')}
      </span>
      <label htmlFor={`${idPrefix}-tpm`}>Tokens/min</label>
      <span>
        <input id={`${idPrefix}-tpm`} inputMode="numeric" placeholder="no limit" value={state.tpm} onChange={(e) => set({ tpm: e.target.value })} disabled={fromConfig('tpm')} aria-describedby={described('tpm')} data-testid={`${idPrefix}-tpm`} />{' '}
        {note('tpm')}
      </span>
      <label htmlFor={`${idPrefix}-budget`}>Budget USD/month</label>
      <span>
        <input id={`${idPrefix}-budget`} inputMode="decimal" placeholder="no budget" value={state.budgetUsd} onChange={(e) => set({ budgetUsd: e.target.value })} disabled={fromConfig('budgetUsd')} aria-describedby={described('budgetUsd')} data-testid={`${idPrefix}-budget`} />{' '}
        <select aria-label="At 100 % of the budget" value={state.budgetAction} onChange={(e) => set({ budgetAction: e.target.value as LimitsFormState['budgetAction'] })} disabled={fromConfig('budgetAction')} aria-describedby={described('budgetAction')} data-testid={`${idPrefix}-budget-action`}>
          <option value="refuse">refuse at 100 %</option>
          <option value="warn">only warn at 100 %</option>
        </select>{' '}
        {note('budgetUsd') ?? note('budgetAction')}
      </span>
      <label htmlFor={`${idPrefix}-expires`}>Expires (end of day, UTC)</label>
      <span>
        <input id={`${idPrefix}-expires`} type="date" value={state.expires} onChange={(e) => set({ expires: e.target.value })} disabled={fromConfig('expiresAt')} aria-describedby={described('expiresAt')} data-testid={`${idPrefix}-expires`} />{' '}
        {note('expiresAt')}
      </span>
    </>
  );
}
