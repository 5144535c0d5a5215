// Import hosts from an OpenSSH client config: main reads ~/.ssh/config (and
// its Includes) itself, or a file the operator chooses — in the desktop app
// through the native dialog, in a browser uploaded as content. The renderer
// never names a path. The chosen hosts of that preview are added to the YAML
// config file and the console reloads it. Hosts whose values are not plain
// data are listed as refused, with why; lines that make ssh run a command
// must each be ticked before a host they apply to can be added.
import { useRef, useState } from 'react';
import type { SshConfigSource } from '../../../../src-preload/contract/index.js';
import { useAppStore } from '../../app/app-context.js';
import { ImportCommandList } from './ImportCommandList.js';
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
  const desktop = useAppStore((s) => s.app.info?.mode === 'electron');
  const [chosen, setChosen] = useState<Set<string>>(new Set());
  const [acknowledged, setAcknowledged] = useState<Set<string>>(new Set());
  const [readError, setReadError] = useState<string | null>(null);
  const upload = useRef<HTMLInputElement>(null);
  const preview = useCall('hosts.importPreview');
  const apply = useCall('hosts.importApply');
  const p = preview.result;

  const load = (source: SshConfigSource): void => {
    apply.reset();
    setReadError(null);
    void preview.run({ source }).then((out) => {
      if (out) setChosen(new Set(out.hosts.filter((h) => !h.exists).map((h) => h.label)));
      setAcknowledged(new Set());
    });
  };
  const chooseFile = (): void => {
    if (desktop) load({ kind: 'dialog' });
    else upload.current?.click();
  };
  const uploaded = (file: File | undefined): void => {
    if (!file) return;
    if (file.size > 1024 * 1024) {
      setReadError(`${file.name} is ${Math.round(file.size / 1024)} KiB; an ssh config is at most 1 MiB`);
      return;
    }
    file.text().then(
      (text) => load({ kind: 'content', name: file.name.slice(0, 255) || 'ssh config', text }),
      (err: unknown) => setReadError(`${file.name} could not be read: ${err instanceof Error ? err.message : String(err)}`),
    );
  };
  const toggle = (label: string): void => setChosen((prev) => flipped(prev, label));
  const toggleCommand = (id: string): void => setAcknowledged((prev) => flipped(prev, id));
  // The command lines of the chosen hosts: each must be ticked before the apply.
  const needed = new Set(p ? p.hosts.filter((h) => chosen.has(h.label)).flatMap((h) => h.commands) : []);
  const unticked = [...needed].filter((id) => !acknowledged.has(id));
  const waiting = p ? p.hosts.filter((h) => chosen.has(h.label) && h.commands.some((id) => !acknowledged.has(id))).map((h) => h.label) : [];

  return (
    <div className="hosts-dialog-backdrop" onKeyDown={(e) => e.key === 'Escape' && onClose()}>
      <div className="hosts-dialog hosts-dialog--wide" role="dialog" aria-modal="true" aria-labelledby="import-title" data-testid="import-dialog">
        <h2 id="import-title" className="hosts-dialog__title">
          Import hosts from an SSH config
        </h2>
        <div className="import-source">
          <button type="button" className="button" disabled={preview.pending} onClick={() => load({ kind: 'default' })} data-testid="import-preview">
            {preview.pending ? 'Reading…' : 'Read ~/.ssh/config'}
          </button>
          <button type="button" className="button button--ghost" disabled={preview.pending} onClick={chooseFile} data-testid="import-choose">
            Choose another file…
          </button>
          <input
            ref={upload}
            type="file"
            hidden
            onChange={(e) => {
              uploaded(e.target.files?.[0]);
              e.target.value = '';
            }}
            aria-label="SSH config file to upload"
            data-testid="import-upload"
          />
          <span className="muted">~/.ssh/config is read with its Includes{desktop ? '' : '; a chosen file is read on its own'}.</span>
        </div>
        {preview.error || readError ? (
          <p className="inline-error" role="alert">
            {readError ?? preview.error}
          </p>
        ) : null}
        {p ? (
          <>
            <p className="muted">
              {p.file}
              {p.files.length > 1 ? ` and ${p.files.length - 1} included file(s)` : ''}: {p.hosts.length} host(s). Chosen hosts are added to{' '}
              <code>{p.configFile}</code> (services are added there by hand).
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
                    <td className="muted">
                      {h.commands.length > 0 ? (
                        <span className="text-warn">
                          ssh runs {h.commands.length} line{h.commands.length === 1 ? '' : 's'} of this file for it (below).{' '}
                        </span>
                      ) : null}
                      {h.exists ? 'already in the config' : h.notes.join('; ')}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            {p.skipped.length + p.issues.length > 0 ? (
              <ul className="import-issues" data-testid="import-issues">
                {p.skipped.map((s) => (
                  <li key={`s-${s.alias}`} className="text-warn" data-testid={`import-refused-${s.alias}`}>
                    refused {s.alias}: {s.reason}
                  </li>
                ))}
                {p.issues.map((i) => (
                  <li key={`${i.file ?? ''}-${i.line}-${i.directive}-${i.message}`} className={i.severity === 'warning' ? 'text-warn' : 'muted'}>
                    {i.file ? `${i.file} ` : ''}line {i.line}: {i.message}
                  </li>
                ))}
              </ul>
            ) : null}
            <ImportCommandList commands={p.commands} acknowledged={acknowledged} needed={needed} onToggle={toggleCommand} />
          </>
        ) : null}
        {waiting.length > 0 ? (
          <p className="import-waiting text-warn" data-testid="import-waiting">
            Tick each command line above to add {waiting.join(', ')}.
          </p>
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
            disabled={!p || chosen.size === 0 || apply.pending || unticked.length > 0}
            onClick={() => p && void apply.run({ previewId: p.previewId, labels: [...chosen], acknowledgedCommands: [...needed] })}
            data-testid="import-apply"
          >
            {apply.pending ? 'Adding…' : `Add ${chosen.size} host${chosen.size === 1 ? '' : 's'} to the config`}
          </button>
        </div>
      </div>
    </div>
  );
}

function flipped(set: ReadonlySet<string>, key: string): Set<string> {
  const next = new Set(set);
  if (next.has(key)) next.delete(key);
  else next.add(key);
  return next;
}
