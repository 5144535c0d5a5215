// The tones of a Badge, in a .ts file so view-model modules (and their tests,
// type-checked without JSX) can name them without importing the component.
export type BadgeTone = 'ok' | 'warn' | 'error' | 'info' | 'neutral' | 'accent';
