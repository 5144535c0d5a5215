// The Notifications view: outside channels (Slack, Zulip, ntfy, signed
// webhooks) — config.yaml's shown read-only, the console's own added, edited
// and removed here (each change audited in main) — a Send test per channel,
// and the stored deliveries, newest first.
import { useState } from 'react';
import type { NotifyChannelView } from '../../../../src-preload/contract/index.js';
import { useServices } from '../../app/app-context.js';
import { toContractError } from '../../transport/transport.js';
import { ChannelForm } from './ChannelForm.js';
import { ChannelsTable, type TestOutcome } from './ChannelsTable.js';
import { DeliveriesTable } from './DeliveriesTable.js';
import { RemoveDialog } from './RemoveDialog.js';
import { DELIVERIES_SHOWN, useNotify } from './use-notify.js';
import './notify.css';

type FormMode = { kind: 'closed' } | { kind: 'add' } | { kind: 'edit'; channel: NotifyChannelView };

export function NotifyView(): React.JSX.Element {
  const { transport } = useServices();
  const { channels, deliveries, error, reload } = useNotify();
  const [form, setForm] = useState<FormMode>({ kind: 'closed' });
  const [removing, setRemoving] = useState<NotifyChannelView | null>(null);
  const [tests, setTests] = useState<Record<string, TestOutcome>>({});
  const [saved, setSaved] = useState<string | null>(null);

  const test = (id: string): void => {
    setTests((t) => ({ ...t, [id]: { pending: true, ok: false, text: 'Sending…' } }));
    transport.invoke('notifications.testChannel', { id }).then(
      (d) => {
        const http = d.httpStatus === null ? '' : ` · HTTP ${d.httpStatus}`;
        const tries = d.attempt > 1 ? ` after ${d.attempt} attempts` : '';
        setTests((t) => ({ ...t, [id]: { pending: false, ok: d.status === 'delivered', text: `${d.status}${http}${tries}${d.error ? ` · ${d.error}` : ''}` } }));
        reload();
      },
      (err: unknown) => {
        const e = toContractError(err);
        setTests((t) => ({ ...t, [id]: { pending: false, ok: false, text: `${e.code}: ${e.message}` } }));
      },
    );
  };

  return (
    <section className="notify" aria-labelledby="notify-title" data-testid="notify-view">
      <div className="view-title">
        <h1 id="notify-title">Notifications</h1>
        <p className="muted">Outside channels page the on-call operator when a host goes down, an alert fires or an approval waits. Secrets stay in main&apos;s secret store.</p>
        <div className="view-title__tools">
          <button type="button" className="button button--primary" onClick={() => { setSaved(null); setForm({ kind: 'add' }); }} disabled={form.kind !== 'closed'} data-testid="notify-add">
            Add channel
          </button>
        </div>
      </div>
      {error ? (
        <p className="inline-error" role="alert" data-testid="notify-error">
          {error}
        </p>
      ) : null}
      {saved ? (
        <p className="notify-saved" role="status" data-testid="notify-saved">
          {saved}
        </p>
      ) : null}

      {form.kind !== 'closed' ? (
        <section className="panel notify-form-panel" aria-label={form.kind === 'edit' ? `Edit channel ${form.channel.id}` : 'Add a channel'}>
          <ChannelForm
            key={form.kind === 'edit' ? form.channel.id : 'add'}
            editing={form.kind === 'edit' ? form.channel : null}
            onCancel={() => setForm({ kind: 'closed' })}
            onDone={(id) => {
              setSaved(`${form.kind === 'edit' ? 'Saved' : 'Added'} channel ${id}. Press Send test to check it.`);
              setForm({ kind: 'closed' });
              reload();
            }}
          />
        </section>
      ) : null}

      <section className="panel" aria-labelledby="notify-channels-title">
        <h3 className="panel__title" id="notify-channels-title">
          Channels <span className="badge">{channels?.length ?? 0}</span>
        </h3>
        {channels === null ? <p className="muted panel__empty">Loading channels…</p> : null}
        {channels !== null && channels.length === 0 ? (
          <p className="muted panel__empty" data-testid="notify-channels-empty">
            No outside channels yet. Press <strong>Add channel</strong> to page Slack, Zulip, an ntfy topic or a signed webhook; channels under <code>notifications.channels</code> in config.yaml show here too.
          </p>
        ) : null}
        {channels !== null && channels.length > 0 ? (
          <ChannelsTable
            channels={channels}
            tests={tests}
            onTest={test}
            onEdit={(c) => { setSaved(null); setForm({ kind: 'edit', channel: c }); }}
            onRemove={setRemoving}
          />
        ) : null}
      </section>

      <section className="panel" aria-labelledby="notify-deliveries-title">
        <h3 className="panel__title" id="notify-deliveries-title">
          Deliveries <span className="muted notify-title-note">newest first, last {DELIVERIES_SHOWN}</span>
        </h3>
        <DeliveriesTable rows={deliveries} />
      </section>

      {removing ? (
        <RemoveDialog
          channel={removing}
          onClose={() => setRemoving(null)}
          onRemoved={() => {
            setSaved(`Removed channel ${removing.id}.`);
            setRemoving(null);
            reload();
          }}
        />
      ) : null}
    </section>
  );
}
