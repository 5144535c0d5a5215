// Everything that lives (sockets, servers, timers, listeners, channels) is a
// Disposable registered in the owner's DisposableStore; disposing twice is harmless.

export interface Disposable {
  dispose(): void | Promise<void>;
}

export function toDisposable(fn: () => void | Promise<void>): Disposable {
  let done = false;
  return {
    dispose: () => {
      if (done) return;
      done = true;
      return fn();
    },
  };
}

export class DisposableStore implements Disposable {
  private readonly items: Disposable[] = [];
  private disposed = false;

  get isDisposed(): boolean {
    return this.disposed;
  }

  get size(): number {
    return this.items.length;
  }

  /** Registers `item`; if the store is already disposed the item is disposed at once. */
  add<T extends Disposable>(item: T): T {
    if (this.disposed) {
      void Promise.resolve(item.dispose()).catch(() => undefined);
      return item;
    }
    this.items.push(item);
    return item;
  }

  /** Removes `item` without disposing it (the caller took over its lifetime). */
  delete(item: Disposable): void {
    const i = this.items.indexOf(item);
    if (i >= 0) this.items.splice(i, 1);
  }

  /** Disposes in reverse order of registration; errors are collected, not thrown early. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    const errors: unknown[] = [];
    while (this.items.length > 0) {
      const item = this.items.pop()!;
      try {
        await item.dispose();
      } catch (err) {
        errors.push(err);
      }
    }
    if (errors.length === 1) throw errors[0];
    if (errors.length > 1) throw new AggregateError(errors, 'several disposables failed');
  }
}

export function timerDisposable(handle: NodeJS.Timeout): Disposable {
  return toDisposable(() => clearTimeout(handle));
}

export function intervalDisposable(handle: NodeJS.Timeout): Disposable {
  return toDisposable(() => clearInterval(handle));
}
