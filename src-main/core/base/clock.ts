import { toDisposable, type Disposable } from './disposable.js';

/** Time as a service so that logic never calls Date.now() and tests control it. */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): Disposable;
  setInterval(fn: () => void, ms: number): Disposable;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout(fn, ms) {
    const handle = setTimeout(fn, ms);
    return toDisposable(() => clearTimeout(handle));
  },
  setInterval(fn, ms) {
    const handle = setInterval(fn, ms);
    return toDisposable(() => clearInterval(handle));
  },
};

interface FakeTimer {
  id: number;
  at: number;
  fn: () => void;
  everyMs: number | null;
}

/** A clock for tests: time moves only when `advance` is called. */
export class FakeClock implements Clock {
  private current: number;
  private timers: FakeTimer[] = [];
  private nextId = 1;

  constructor(start = 1_700_000_000_000) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimeout(fn: () => void, ms: number): Disposable {
    return this.schedule(fn, ms, null);
  }

  setInterval(fn: () => void, ms: number): Disposable {
    return this.schedule(fn, ms, Math.max(1, ms));
  }

  get pending(): number {
    return this.timers.length;
  }

  advance(ms: number): void {
    const target = this.current + ms;
    for (;;) {
      this.timers.sort((a, b) => a.at - b.at || a.id - b.id);
      const next = this.timers[0];
      if (!next || next.at > target) break;
      this.current = next.at;
      if (next.everyMs === null) this.timers.shift();
      else next.at += next.everyMs;
      next.fn();
    }
    this.current = target;
  }

  private schedule(fn: () => void, ms: number, everyMs: number | null): Disposable {
    const timer: FakeTimer = { id: this.nextId++, at: this.current + Math.max(0, ms), fn, everyMs };
    this.timers.push(timer);
    return toDisposable(() => {
      this.timers = this.timers.filter((t) => t !== timer);
    });
  }
}
