// Per-client governance of proxy tokens (issue #32): an allow-list of models,
// requests and tokens a minute, a monthly budget and an expiry. NULL: no limit.
// Config `proxy.clients` may set the same fields; it wins at run time (proxy/client-policy.ts)
// and these columns keep what the UI or the CLI stored.
// Shaped as migrations.ts's Migration without importing it: that file lists this one (no import cycle).
export const CLIENT_LIMITS_MIGRATION = {
  version: 13,
  name: 'client_token_limits',
  up: `
    -- JSON array of model names, aliases or groups; NULL = every model.
    ALTER TABLE client_tokens ADD COLUMN allowed_models TEXT CHECK (allowed_models IS NULL OR json_valid(allowed_models));
    ALTER TABLE client_tokens ADD COLUMN rpm INTEGER CHECK (rpm IS NULL OR rpm > 0);
    ALTER TABLE client_tokens ADD COLUMN tpm INTEGER CHECK (tpm IS NULL OR tpm > 0);
    ALTER TABLE client_tokens ADD COLUMN budget_usd REAL CHECK (budget_usd IS NULL OR budget_usd > 0);
    ALTER TABLE client_tokens ADD COLUMN budget_action TEXT NOT NULL DEFAULT 'refuse' CHECK (budget_action IN ('refuse', 'warn'));
    ALTER TABLE client_tokens ADD COLUMN expires_at INTEGER;
  `,
};
