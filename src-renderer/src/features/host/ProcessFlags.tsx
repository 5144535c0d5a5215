// What no configured service accounts for (memory on a GPU, a second or stale
// listener on a service's port), each with the command the operator may run on
// the host as text to copy. The console never runs it.
import type { ProcessFlagView } from '../../../../src-preload/contract/index.js';
import { CopyButton } from '../../components/CopyButton.js';

export function ProcessFlags({ flags }: { readonly flags: readonly ProcessFlagView[] | undefined }): React.JSX.Element | null {
  if (flags === undefined || flags.length === 0) return null;
  return (
    <section className="health-panel health-panel--flags" aria-labelledby="process-flags-title" data-testid="process-flags">
      <h3 id="process-flags-title" className="health-panel__title">
        <span aria-hidden="true">⚠ </span>
        {flags.length === 1 ? '1 process flag' : `${flags.length} process flags`}
        <span className="muted health-panel__meta"> · the console kills nothing: run the command on the host yourself if it is right</span>
      </h3>
      <ul className="process-flags">
        {flags.map((f, i) => (
          <li key={`${f.code}-${f.pid ?? 'x'}-${i}`} className="process-flag" data-testid="process-flag" data-code={f.code}>
            <p className="process-flag__message">
              <span className="code">{f.code}</span> {f.message}
            </p>
            {f.command !== null ? (
              <div className="process-flag__command">
                <code data-testid="flag-command">{f.command}</code>
                <CopyButton text={f.command} label={`Copy the command: ${f.command}`} />
              </div>
            ) : null}
          </li>
        ))}
      </ul>
    </section>
  );
}
