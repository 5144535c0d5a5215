import { useAppStore } from './app-context.js';

export function ConfigErrorBanner(): React.JSX.Element | null {
  const error = useAppStore((s) => s.app.info?.configError ?? null);
  const file = useAppStore((s) => s.app.info?.configFile ?? null);
  if (error === null) return null;
  const where = [error.details['file'], error.details['line'], error.details['field']]
    .filter((part) => typeof part === 'string' || typeof part === 'number')
    .join(':');
  return (
    <div className="config-banner" role="alert" data-testid="config-error">
      <strong>Configuration error</strong>
      <span className="config-banner__code">{error.code}</span>
      <span>{error.message}</span>
      {where ? <code>{where}</code> : file ? <code>{file}</code> : null}
      <span className="muted">The console keeps the last good configuration until the file is fixed.</span>
    </div>
  );
}
