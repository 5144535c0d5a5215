import { toDisposable, type Disposable } from './disposable.js';

/** A typed event emitter whose subscriptions are disposables. */
export class Emitter<T> implements Disposable {
  private listeners = new Set<(value: T) => void>();

  on(listener: (value: T) => void): Disposable {
    this.listeners.add(listener);
    return toDisposable(() => {
      this.listeners.delete(listener);
    });
  }

  fire(value: T): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(value);
      } catch (err) {
        // A faulty listener must not starve the others; it is a bug, so say so loudly.
        console.error('[events] listener threw', err);
      }
    }
  }

  get listenerCount(): number {
    return this.listeners.size;
  }

  dispose(): void {
    this.listeners.clear();
  }
}
