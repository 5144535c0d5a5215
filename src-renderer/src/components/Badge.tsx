import type { BadgeTone } from './badge-tone.js';

export type { BadgeTone };

export interface BadgeProps {
  readonly tone: BadgeTone;
  readonly children: React.ReactNode;
  readonly title?: string;
  readonly testId?: string;
  readonly value?: string;
}

export function Badge({ tone, children, title, testId, value }: BadgeProps): React.JSX.Element {
  return (
    <span className={`badge badge--${tone}`} title={title} data-testid={testId} data-value={value}>
      {children}
    </span>
  );
}
