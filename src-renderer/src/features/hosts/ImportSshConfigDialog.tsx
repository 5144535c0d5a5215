// Import hosts from an OpenSSH client config: main reads the file (default
// ~/.ssh/config), shows what it found and what it did not import; the chosen
// hosts are added to the YAML config file and the console reloads it.
import { useState } from 'react';
import { useCall } from './use-call.js';
import './hosts.css';

export function ImportSshConfigButton(): React.JSX.Element {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button type="button" className="button" onClick={() => setOpen(true)} data-testid="import-ssh-config">
        Import ~/.ssh/config…
      </button>
      {open ? <ImportSshConfigDialog onClose={() => setOpen(false)} /> : null}
    </>
  );
}

export function ImportSshConfigDialog({ onClose }: { readonly onClose: () => void }): React.JSX.Element {
  const [file, setFile] = useState('');
  const [chosen, setChosen] = useState<Set<string>>(new Set());
  const preview = useCall('hosts.importPreview');
  const apply = useCall('hosts.importApply');
  const p = preview.result;

  const load = (): void => {
    apply.reset();
    void preview.run(file.trim() ? { file: file.trim() } : {}).then((out) => {
      if (out) setChosen(new Set(out.hosts.filter((h) => !h.exists).map((h) => h.label)));
    });
  };
  const toggle = (label: string): void =>
    setChosen((prev) => {
      const next = new Set(prev);
      if (next.has(label)) next.delete(label);
      else next.add(label);
      return next;
    });

  return (
    <div className="hosts-dialog-backdrop" onKeyDown={(e) => e.key === 'Escape' && onClose()}>
      <div className="hosts-dialog hosts-dialog--wide" role="dialog" aria-modal="true" aria-labelledby="import-title" data-testid="import-dialog">
        <h2 id="import-title" className="hosts-dialog__title">
          Import hosts from an SSH config
        </h2>
        <form
          className="import-source"
          onSubmit={(e) => {
            e.preventDefault();
            load();
          }}
        >
          <input
            className="import-source__input"
            placeholder="~/.ssh/config"
            value={file}
            onChange={(e) => setFile(e.target.value)}
            aria-label="SSH config file"
            data-testid="import-file"
          />
          <button type="submit" className="button" disabled={preview.pending} data-testid="import-preview">
            {preview.pending ? 'Reading…' : 'Read'}
          </button>
        </form>
        {preview.error ? (
          <p className="inline-error" role="alert">
            {preview.error}
          </p>
        ) : null}
        {p ? (
          <>
            <p className="muted">
              {p.file}: {p.hosts.length} host(s). Chosen hosts are added to <code>{p.configFile}</code> (services are added there by hand).
            </p>
            <table className="data-table import-table">
              <thead>
                <tr>
                  <th scope="col" />
                  <th scope="col">Label</th>
                  <th scope="col">Address</th>
                  <th scope="col">Auth</th>
                  <th scope="col">Notes</th>
                </tr>
              </thead>
              <tbody>
                {p.hosts.map((h) => (
                  <tr key={h.label} data-testid={`import-row-${h.label}`}>
                    <td>
                      <input type="checkbox" checked={chosen.has(h.label)} disabled={h.exists} onChange={() => toggle(h.label)} aria-label={`Import ${h.label}`} />
                    </td>
                    <td>{h.label}</td>
                    <td>
                      <code>
                        {h.user}@{h.host}:{h.port}
                      </code>
                      {h.jumpHost ? <span className="muted"> via {h.jumpHost}</span> : null}
                    </td>
                    <td>{h.identityFile ? <code>{h.identityFile}</code> : 'ssh-agent'}</td>
                    <td className="muted">{h.exists ? 'already in the config' : h.notes.join('; ')}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            {p.skipped.length + p.issues.length > 0 ? (
              <ul className="import-issues" data-testid="import-issues">
                {p.skipped.map((s) => (
                  <li key={`s-${s.alias}`} className="text-warn">
                    skipped {s.alias}: {s.reason}
                  </li>
                ))}
                {p.issues.map((i) => (
                  <li key={`${i.line}-${i.directive}-${i.message}`} className={i.severity === 'warning' ? 'text-warn' : 'muted'}>
                    line {i.line}: {i.message}
                  </li>
                ))}
              </ul>
            ) : null}
          </>
        ) : null}
        {apply.result ? (
          <p className="import-done" role="status" data-testid="import-result">
            Added {apply.result.added.join(', ') || 'nothing'} to {apply.result.configFile}
            {apply.result.reloaded ? ' and reloaded it.' : '.'} {apply.result.note ?? ''}
          </p>
        ) : null}
        {apply.error ? (
          <p className="inline-error" role="alert">
            {apply.error}
          </p>
        ) : null}
        <div className="hosts-dialog__actions">
          <button type="button" className="button button--ghost" onClick={onClose}>
            Close
          </button>
          <button
            type="button"
            className="button button--primary"
            disabled={!p || chosen.size === 0 || apply.pending}
            onClick={() => void apply.run({ ...(file.trim() ? { file: file.trim() } : {}), labels: [...chosen] })}
            data-testid="import-apply"
          >
            {apply.pending ? 'Adding…' : `Add ${chosen.size} host${chosen.size === 1 ? '' : 's'} to the config`}
          </button>
        </div>
      </div>
    </div>
  );
}
