// Full-page explanation when the web bridge cannot be used: no token in the
// URL, or the token belongs to an earlier `serve` run.
export interface TokenPageProps {
  readonly reason: 'missing' | 'refused';
}

export function TokenPage({ reason }: TokenPageProps): React.JSX.Element {
  return (
    <main className="token-page" data-testid={`token-page-${reason}`}>
      <div className="token-page__panel">
        <h1>GPU Console</h1>
        {reason === 'missing' ? (
          <p>This page needs the access token that the console prints when it starts.</p>
        ) : (
          <p>The console refused this page&apos;s access token — it probably belongs to an earlier run.</p>
        )}
        <p>
          Open the URL printed by <code>gpu-console serve</code> in your terminal. It looks like{' '}
          <code>http://127.0.0.1:PORT/#token=…</code>
        </p>
        <p className="muted">The token stays in this tab only and is removed from the address bar after it is read.</p>
      </div>
    </main>
  );
}
