import { describe, expect, it } from 'vitest';
import { AlertSchema, type Alert, type AlertEvent } from '../../../../src-preload/contract/index.js';
import { alertSubject, applyAlertEvent, contextKinds, listWithEvents, showCount } from '../../../../src-renderer/src/features/host/alert-list-state.js';

// The host view's alert list (issue #29 item 5): kept from alerts.list and
// alert.changed (an early clear is not undone by the list's answer), critical
// first; each new kind shows its label, subject, message, count, the command
// as text, and a log failure's lines collapsed in a <details>.

const alert = (p: Partial<Alert>): Alert =>
  AlertSchema.parse({ id: 'a', kind: 'disk_low', severity: 'warning', host: 'l20', serviceId: null, model: null, message: 'm', value: null, threshold: null, raisedAt: 1, updatedAt: 1, ...p });

// The node typecheck (tsconfig.node.json) has no JSX: the component is loaded by a specifier it does not resolve.
// React's types are kept out of it too: @types/react declares empty DOM interfaces (HTMLElement…) that
// would hide the real ones from the e2e tests' page.evaluate callbacks.
const COMPONENT = '../../../../src-renderer/src/features/host/AlertList.js';
const REACT = 'react';
const REACT_DOM_SERVER = 'react-dom/server';
type Props = { alerts: readonly Alert[] };
const { AlertList } = (await import(COMPONENT)) as { AlertList: (p: Props) => unknown };
const { createElement } = (await import(REACT)) as { createElement(c: (p: Props) => unknown, p: Props): unknown };
const { renderToStaticMarkup } = (await import(REACT_DOM_SERVER)) as { renderToStaticMarkup(el: unknown): string };

const ev = (type: AlertEvent['type'], a: Alert): AlertEvent => ({ type, at: a.updatedAt, alert: a });

describe('alert list state', () => {
  it('raised/changed replace by id, cleared removes; critical first, then newest', () => {
    const disk = alert({ id: 'disk', raisedAt: 5 });
    const oom = alert({ id: 'oom', kind: 'log_failure', severity: 'critical', raisedAt: 1 });
    let list = applyAlertEvent([], ev('raised', disk));
    list = applyAlertEvent(list, ev('raised', oom));
    expect(list.map((a) => a.id)).toEqual(['oom', 'disk']);
    list = applyAlertEvent(list, ev('changed', { ...oom, count: 4 }));
    expect(list.find((a) => a.id === 'oom')!.count).toBe(4);
    expect(applyAlertEvent(list, ev('cleared', disk)).map((a) => a.id)).toEqual(['oom']);
  });

  it('events that beat the list answer are applied on top of it', () => {
    const disk = alert({ id: 'disk' });
    expect(listWithEvents([disk], [ev('cleared', disk)])).toEqual([]);
    expect(listWithEvents([], [ev('raised', disk)]).map((a) => a.id)).toEqual(['disk']);
  });

  it('lists a context\'s failure kinds causes first; counts only what the message does not say', () => {
    expect(contextKinds([{ text: 't', ts: null, failure: 'traceback' }, { text: 'e', ts: null, failure: 'engine-dead' }, { text: 'o', ts: null, failure: 'cuda-oom' }, { text: 'x', ts: null, failure: null }])).toBe('cuda-oom, engine-dead, traceback');
    expect(showCount({ kind: 'log_failure', count: 8, value: 8 })).toBe(false);
    expect(showCount({ kind: 'log_failure', count: 11, value: 8 })).toBe(true);
    expect(showCount({ kind: 'gpu_fault', count: 2, value: 79 })).toBe(true);
    expect(showCount({ kind: 'gpu_fault', count: 1, value: 79 })).toBe(false);
  });

  it('names the service and GPU an alert is about', () => {
    expect(alertSubject({ serviceId: 'qwen', gpuIndex: 1 })).toBe('qwen · GPU1');
    expect(alertSubject({ serviceId: null, gpuIndex: 0 })).toBe('GPU0');
    expect(alertSubject({ serviceId: null })).toBeNull();
  });
});

describe('AlertList', () => {
  it('shows the kind, message, count, command and the context lines collapsed', () => {
    const html = renderToStaticMarkup(
      createElement(AlertList, {
        alerts: [
          alert({
            id: 'log',
            kind: 'log_failure',
            severity: 'critical',
            serviceId: 'qwen',
            message: 'cuda-oom in the log of qwen (2 lines)',
            count: 3,
            context: [
              { text: 'INFO loading', ts: 1, failure: null },
              { text: 'torch.OutOfMemoryError: CUDA out of memory <b>', ts: 2, failure: 'cuda-oom' },
            ],
          }),
          alert({ id: 'ghost', kind: 'gpu_process_unknown', gpuIndex: 0, message: 'PID 4812 llama-server holds 9.1 GiB on GPU0', command: 'kill 4812' }),
        ],
      }),
    );
    expect(html).toContain('Log failure');
    expect(html).toContain('cuda-oom in the log of qwen (2 lines)');
    expect(html).toContain('×3');
    // Collapsed: a <details> without `open`, its summary naming the count and the failure kinds.
    expect(html).toMatch(/<details class="host-alerts__context" data-testid="host-alert-context"><summary>2 log lines \(cuda-oom\)<\/summary>/);
    expect(html).not.toMatch(/<details[^>]* open/);
    // Log text is text, never markup.
    expect(html).toContain('CUDA out of memory &lt;b&gt;');
    expect(html).toContain('data-failure="cuda-oom"');
    expect(html).toContain('GPU process');
    expect(html).toContain('GPU0');
    expect(html).toContain('<code data-testid="host-alert-command">kill 4812</code>');
    expect(html).toContain('aria-label="Copy the command"');
  });

  it('shows nothing when there is no alert', () => {
    expect(renderToStaticMarkup(createElement(AlertList, { alerts: [] }))).toBe('');
  });
});
