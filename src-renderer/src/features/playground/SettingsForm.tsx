// The request's settings: which model or group, the class it queues at,
// streaming, max_tokens, temperature and the system prompt. Every field has a
// visible label; a model whose replicas all sleep is marked in the list.
import { useEffect, useMemo } from 'react';
import { useStore } from 'zustand';
import type { ModelRouteView, TrafficClass, UpstreamFigures } from '../../../../src-preload/contract/index.js';
import { useAppStore } from '../../app/app-context.js';
import { modelChoices } from './playground-models.js';
import type { PlaygroundStore } from './playground-store.js';

const NO_MODELS: readonly ModelRouteView[] = [];
const NO_UPSTREAMS: readonly UpstreamFigures[] = [];
const CLASSES: readonly TrafficClass[] = ['interactive', 'system', 'batch'];

export function SettingsForm({ store }: { store: PlaygroundStore }): React.JSX.Element {
  const settings = useStore(store, (s) => s.settings);
  const running = useStore(store, (s) => s.running !== null);
  const models = useAppStore((s) => s.proxy.stats?.models ?? NO_MODELS);
  const upstreams = useAppStore((s) => s.proxy.stats?.upstreams ?? NO_UPSTREAMS);
  const choices = useMemo(() => modelChoices(models, upstreams), [models, upstreams]);
  const set = store.getState().setSettings;

  // The first model that is awake, once the proxy's list arrives.
  useEffect(() => {
    if (settings.model === '' && choices.length > 0) set({ model: (choices.find((c) => !c.asleep && c.kind === 'model') ?? choices[0]!).name });
  }, [choices, settings.model, set]);

  return (
    <form className="panel playground-settings" aria-label="Request settings" onSubmit={(e) => e.preventDefault()} data-testid="playground-settings">
      <h2 className="panel__title">Request</h2>
      <div className="playground-settings__body">
        <label className="playground-field">
          Model or group
          <select value={settings.model} onChange={(e) => set({ model: e.target.value })} disabled={running} data-testid="playground-model">
            {choices.length === 0 ? <option value="">No models served</option> : null}
            {choices.map((c) => (
              <option key={`${c.kind}:${c.name}`} value={c.name}>
                {c.name}
                {c.kind === 'group' ? ' (group)' : ''}
                {c.asleep ? ' — asleep' : ''}
              </option>
            ))}
          </select>
        </label>
        <label className="playground-field">
          Class
          <select value={settings.cls} onChange={(e) => set({ cls: e.target.value as TrafficClass })} disabled={running} data-testid="playground-class">
            {CLASSES.map((c) => (
              <option key={c} value={c}>
                {c}
              </option>
            ))}
          </select>
        </label>
        <div className="playground-settings__row">
          <label className="playground-field">
            max_tokens
            <input type="number" inputMode="numeric" min={1} step={1} value={settings.maxTokens} onChange={(e) => set({ maxTokens: e.target.value })} disabled={running} data-testid="playground-max-tokens" />
          </label>
          <label className="playground-field">
            Temperature
            <input type="number" inputMode="decimal" min={0} max={2} step={0.1} placeholder="server default" value={settings.temperature} onChange={(e) => set({ temperature: e.target.value })} disabled={running} data-testid="playground-temperature" />
          </label>
        </div>
        <label className="playground-check">
          <input type="checkbox" checked={settings.stream} onChange={(e) => set({ stream: e.target.checked })} disabled={running} data-testid="playground-stream" />
          Stream the answer
        </label>
        <label className="playground-field">
          System prompt
          <textarea rows={4} value={settings.systemPrompt} onChange={(e) => set({ systemPrompt: e.target.value })} disabled={running} placeholder="none" data-testid="playground-system" />
        </label>
        <p className="muted playground-settings__note">
          Sent through the proxy as the client <code>console:playground</code>: queued at its class, logged and counted like any client&apos;s request.
        </p>
      </div>
    </form>
  );
}
