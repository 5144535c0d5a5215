// A host card mounted only while it is on screen (or near it). With a large
// fleet, offscreen cards would otherwise re-render and redraw their sparklines
// every tick; a placeholder of the card's last height keeps the scroll stable.
import { useEffect, useRef, useState } from 'react';
import { HostCard } from './HostCard.js';

/** Height of a card not measured yet (px): about one host with a few GPUs. */
const ESTIMATED_HEIGHT_PX = 420;

export function LazyHostCard({ label }: { readonly label: string }): React.JSX.Element {
  const ref = useRef<HTMLDivElement>(null);
  const [visible, setVisible] = useState(false);
  const height = useRef(ESTIMATED_HEIGHT_PX);
  useEffect(() => {
    const el = ref.current;
    if (el === null) return undefined;
    const io = new IntersectionObserver(
      ([entry]) => {
        if (entry === undefined) return;
        if (!entry.isIntersecting && el.offsetHeight > 0) height.current = el.offsetHeight;
        setVisible(entry.isIntersecting);
      },
      { rootMargin: '400px 0px' },
    );
    io.observe(el);
    return () => io.disconnect();
  }, []);
  return (
    <div ref={ref} className="host-slot" data-testid={`host-slot-${label}`} style={visible ? undefined : { height: height.current }}>
      {visible ? <HostCard label={label} /> : null}
    </div>
  );
}
