// What a confirmation dialog does on opening: the safe button (Cancel) takes
// the focus, and Escape anywhere backs out. Returns the ref for that button.
import { useEffect, useRef } from 'react';

export function useDialogDismiss(onClose: () => void): React.RefObject<HTMLButtonElement | null> {
  const cancelRef = useRef<HTMLButtonElement>(null);
  useEffect(() => cancelRef.current?.focus(), []);
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') onClose();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [onClose]);
  return cancelRef;
}
