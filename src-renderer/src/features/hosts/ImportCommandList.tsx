// The lines of an imported ssh config that make ssh run something on this
// computer (ProxyCommand, Match exec, LocalCommand, …), each shown as written
// with the hosts it applies to and what applying means, and a box the
// operator ticks for each before those hosts can be added. The preview never
// ran or evaluated any of them.
import type { SshConfigCommand } from '../../../../src-preload/contract/index.js';

export function ImportCommandList({
  commands,
  acknowledged,
  needed,
  onToggle,
}: {
  readonly commands: readonly SshConfigCommand[];
  readonly acknowledged: ReadonlySet<string>;
  /** Ids that apply to a host chosen for import: those must be ticked. */
  readonly needed: ReadonlySet<string>;
  readonly onToggle: (id: string) => void;
}): React.JSX.Element | null {
  if (commands.length === 0) return null;
  return (
    <section className="import-commands" aria-labelledby="import-commands-title" data-testid="import-commands">
      <h3 id="import-commands-title" className="import-commands__title">
        Lines that make ssh run a command on this computer
      </h3>
      <p className="hosts-dialog__hint">Read each one. A host they apply to is added only when every one of its lines is ticked; nothing here has been run.</p>
      <ul className="import-commands__list">
        {commands.map((c) => (
          <li key={c.id} className={`import-command${needed.has(c.id) && !acknowledged.has(c.id) ? ' import-command--open' : ''}`} data-testid={`import-command-${c.id}`}>
            <label className="import-command__head">
              <input type="checkbox" checked={acknowledged.has(c.id)} onChange={() => onToggle(c.id)} aria-label={`I have read ${c.directive} on line ${c.line}`} />
              <strong>{c.directive}</strong>
              <span className="muted">
                {c.file ? `${c.file} ` : ''}line {c.line} · for {c.hosts.join(', ')}
              </span>
            </label>
            <pre className="import-command__text">{c.text}</pre>
            <p className="import-command__effect muted">{c.effect}</p>
          </li>
        ))}
      </ul>
    </section>
  );
}
