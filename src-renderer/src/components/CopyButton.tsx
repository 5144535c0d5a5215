// Copies text to the clipboard; says so, or says it failed (no clipboard
// permission, insecure context) so the operator can select the text instead.
import { useEffect, useRef, useState } from 'react';

type CopyState = 'idle' | 'copied' | 'failed';

export interface CopyButtonProps {
  readonly text: string;
  readonly label: string;
}

export function CopyButton({ text, label }: CopyButtonProps): React.JSX.Element {
  const [state, setState] = useState<CopyState>('idle');
  const timer = useRef<number | null>(null);

  useEffect(
    () => () => {
      if (timer.current !== null) window.clearTimeout(timer.current);
    },
    [],
  );

  const show = (next: CopyState): void => {
    setState(next);
    if (timer.current !== null) window.clearTimeout(timer.current);
    timer.current = window.setTimeout(() => setState('idle'), 1800);
  };

  const copy = (): void => {
    const clipboard = typeof navigator !== 'undefined' ? navigator.clipboard : undefined;
    if (!clipboard?.writeText) {
      show('failed');
      return;
    }
    clipboard.writeText(text).then(
      () => show('copied'),
      () => show('failed'),
    );
  };

  return (
    <button
      type="button"
      className={`icon-button copy-button copy-button--${state}`}
      onClick={copy}
      aria-label={label}
      title={state === 'failed' ? 'Copy failed — select the text instead' : label}
    >
      {state === 'copied' ? 'Copied' : state === 'failed' ? 'Copy failed' : 'Copy'}
      <span className="visually-hidden" aria-live="polite">
        {state === 'copied' ? 'Copied to clipboard' : state === 'failed' ? 'Copy failed' : ''}
      </span>
    </button>
  );
}
