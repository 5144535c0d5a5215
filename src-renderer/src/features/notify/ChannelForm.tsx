// Add or edit a channel made in the console. The URL and the secret are never
// shown back: editing starts with both empty ("leave empty to keep"). The
// secret field is a password field and its value goes to main's secret store.
import { useEffect, useRef, useState } from 'react';
import type { NotifyChannelView } from '../../../../src-preload/contract/index.js';
import { useServices } from '../../app/app-context.js';
import { toContractError } from '../../transport/transport.js';
import { EVENTS, KINDS, SEVERITIES, emptyForm, formFromView, formProblems, saveInput, secretLabel, type ChannelFormState } from './channel-form.js';

export function ChannelForm({ editing, onDone, onCancel }: { editing: NotifyChannelView | null; onDone: (id: string) => void; onCancel: () => void }): React.JSX.Element {
  const { transport } = useServices();
  const [f, setF] = useState<ChannelFormState>(() => (editing ? formFromView(editing) : emptyForm()));
  const [problems, setProblems] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);
  const idRef = useRef<HTMLInputElement>(null);
  const kindRef = useRef<HTMLSelectElement>(null);
  // The first field that can change: the id when adding, the kind when editing (the id is fixed then).
  useEffect(() => (editing ? kindRef.current : idRef.current)?.focus(), [editing]);
  const set = <K extends keyof ChannelFormState>(k: K, v: ChannelFormState[K]): void => setF((s) => ({ ...s, [k]: v }));
  const toggleEvent = (e: ChannelFormState['events'][number], on: boolean): void =>
    setF((s) => ({ ...s, events: on ? [...s.events.filter((x) => x !== e), e] : s.events.filter((x) => x !== e) }));
  const secretName = secretLabel(f.kind);

  const submit = (e: React.FormEvent): void => {
    e.preventDefault();
    const local = formProblems(f, editing !== null);
    setProblems(local);
    if (local.length > 0 || busy) return;
    setBusy(true);
    transport.invoke('notifications.saveChannel', saveInput(f, editing)).then(
      (r) => {
        setBusy(false);
        onDone(r.channel.id);
      },
      (err: unknown) => {
        const x = toContractError(err);
        setBusy(false);
        setProblems([`${x.code}: ${x.message}`]);
      },
    );
  };

  return (
    <form className="notify-form" noValidate onSubmit={submit} aria-labelledby="notify-form-title" data-testid="notify-form">
      <h3 className="panel__title" id="notify-form-title">
        {editing ? `Edit channel ${editing.id}` : 'Add a channel'}
      </h3>
      <div className="notify-form__grid">
        <label className="notify-field">
          <span>Channel id</span>
          <input
            ref={idRef}
            value={f.id}
            onChange={(e) => set('id', e.target.value)}
            readOnly={editing !== null}
            placeholder="e.g. oncall-pager"
            autoComplete="off"
            spellCheck={false}
            data-testid="notify-id"
          />
        </label>
        <label className="notify-field">
          <span>Kind</span>
          <select ref={kindRef} value={f.kind} onChange={(e) => set('kind', e.target.value as ChannelFormState['kind'])} data-testid="notify-kind">
            {KINDS.map((k) => (
              <option key={k.kind} value={k.kind}>
                {k.label}
              </option>
            ))}
          </select>
        </label>
        <label className="notify-field notify-field--wide">
          <span>URL{editing ? <span className="muted"> (leave empty to keep {editing.maskedUrl})</span> : null}</span>
          <input
            type="url"
            value={f.url}
            onChange={(e) => set('url', e.target.value)}
            placeholder={f.kind === 'slack' ? 'https://hooks.slack.com/services/…' : f.kind === 'ntfy' ? 'https://ntfy.sh/your-topic' : f.kind === 'zulip' ? 'https://your-org.zulipchat.com' : 'https://ops.example.org/hooks/gpu'}
            autoComplete="off"
            spellCheck={false}
            data-testid="notify-url"
          />
        </label>
        <label className="notify-field">
          <span>Minimum severity</span>
          <select value={f.minSeverity} onChange={(e) => set('minSeverity', e.target.value as ChannelFormState['minSeverity'])} data-testid="notify-severity">
            {SEVERITIES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label className="notify-field">
          <span>Messages a minute (1–120; more wait)</span>
          <input inputMode="numeric" value={f.maxPerMinute} onChange={(e) => set('maxPerMinute', e.target.value)} autoComplete="off" data-testid="notify-rate" />
        </label>
      </div>

      <fieldset className="notify-fieldset">
        <legend>Events</legend>
        <div className="notify-events">
          {EVENTS.map((e) => (
            <label key={e.event} className="notify-check">
              <input type="checkbox" checked={f.events.includes(e.event)} onChange={(x) => toggleEvent(e.event, x.target.checked)} data-testid={`notify-event-${e.event}`} /> {e.label}
            </label>
          ))}
        </div>
      </fieldset>

      <fieldset className="notify-fieldset">
        <legend>Quiet hours (critical notices still go out)</legend>
        <div className="notify-form__grid">
          <label className="notify-field">
            <span>From</span>
            <input type="time" value={f.quietFrom} onChange={(e) => set('quietFrom', e.target.value)} data-testid="notify-quiet-from" />
          </label>
          <label className="notify-field">
            <span>To</span>
            <input type="time" value={f.quietTo} onChange={(e) => set('quietTo', e.target.value)} data-testid="notify-quiet-to" />
          </label>
          <label className="notify-field">
            <span>Time zone</span>
            <input value={f.quietTz} onChange={(e) => set('quietTz', e.target.value)} placeholder="Europe/Berlin" autoComplete="off" spellCheck={false} data-testid="notify-quiet-tz" />
          </label>
        </div>
      </fieldset>

      {f.kind === 'zulip' ? (
        <fieldset className="notify-fieldset">
          <legend>Zulip</legend>
          <div className="notify-form__grid">
            <label className="notify-field">
              <span>Bot e-mail</span>
              <input type="email" value={f.zulipEmail} onChange={(e) => set('zulipEmail', e.target.value)} autoComplete="off" data-testid="notify-zulip-email" />
            </label>
            <label className="notify-field">
              <span>Stream</span>
              <input value={f.zulipStream} onChange={(e) => set('zulipStream', e.target.value)} autoComplete="off" data-testid="notify-zulip-stream" />
            </label>
            <label className="notify-field">
              <span>Topic</span>
              <input value={f.zulipTopic} onChange={(e) => set('zulipTopic', e.target.value)} autoComplete="off" data-testid="notify-zulip-topic" />
            </label>
          </div>
        </fieldset>
      ) : null}

      <div className="notify-form__grid">
        {secretName ? (
          <label className="notify-field notify-field--wide">
            <span>
              {secretName}
              <span className="muted">
                {!editing?.hasSecret
                  ? ' (kept in the secret store; never shown again)'
                  : f.kind !== editing.kind
                    ? ' (give it again: the stored one was given for another kind)'
                    : f.url.trim()
                      ? ' (stored; give it again if the host changes: a secret goes only where it was given for)'
                      : ' (stored; leave empty to keep it)'}
              </span>
            </span>
            <input type="password" value={f.secret} onChange={(e) => set('secret', e.target.value)} autoComplete="new-password" data-testid="notify-secret" />
          </label>
        ) : (
          <p className="muted notify-field--wide">A Slack incoming webhook needs no separate secret: its URL is the secret, and it is shown masked.</p>
        )}
        <label className="notify-check notify-check--inline">
          <input type="checkbox" checked={f.enabled} onChange={(e) => set('enabled', e.target.checked)} data-testid="notify-enabled" /> Enabled
        </label>
      </div>

      {problems.length > 0 ? (
        <div className="inline-error" role="alert" data-testid="notify-form-error">
          {problems.map((p) => (
            <div key={p}>{p}</div>
          ))}
        </div>
      ) : null}
      <div className="notify-form__actions">
        <button type="button" className="button" onClick={onCancel} disabled={busy} data-testid="notify-cancel">
          Cancel
        </button>
        <button type="submit" className="button button--primary" disabled={busy} data-testid="notify-save">
          {editing ? 'Save changes' : 'Add channel'}
        </button>
      </div>
    </form>
  );
}
