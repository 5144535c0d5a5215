// The card of one host, opened from the overview: the same card the small
// fleet shows, beside the overview; Escape or Close returns to the tile.
import { useEffect, useRef } from 'react';
import { HostCard } from '../HostCard.js';

export interface HostDrawerProps {
  readonly label: string;
  readonly onClose: () => void;
  readonly onOpenHostView: (label: string) => void;
}

export function HostDrawer({ label, onClose, onOpenHostView }: HostDrawerProps): React.JSX.Element {
  const closeRef = useRef<HTMLButtonElement>(null);
  useEffect(() => closeRef.current?.focus(), [label]);
  return (
    <div
      className="ov-drawer"
      role="dialog"
      aria-modal="false"
      aria-label={`Host ${label}`}
      data-testid="ov-drawer"
      onKeyDown={(e) => {
        if (e.key === 'Escape') {
          e.stopPropagation();
          onClose();
        }
      }}
    >
      <div className="ov-drawer__bar">
        <button type="button" className="button" onClick={() => onOpenHostView(label)} data-testid="ov-drawer-host-view">
          Charts, logs and health of {label}
        </button>
        <button type="button" className="button" ref={closeRef} onClick={onClose} data-testid="ov-drawer-close">
          Close <span className="muted">(Esc)</span>
        </button>
      </div>
      <HostCard label={label} />
    </div>
  );
}
