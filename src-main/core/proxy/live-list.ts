// The proxy's sets of requests in progress (all open ones; those running on
// each upstream) as doubly linked lists of small nodes rather than `Set`s.
//
// Why not a Set: with steady add/delete churn a Set's hash table is rebuilt
// every few dozen requests, and V8 leaves the old table pointing at every entry
// it held (for live iterators). Once such a table sits in the old generation,
// each scavenge treats the finished requests it names as live, copies them and
// then promotes them — their whole graph (request, response, closures, buffers)
// — until the next full GC. Under load that was most of the proxy's GC work
// (≈2 KB promoted per request; see test/bench/proxy-overhead.ts). A removed
// node here drops all its pointers, so a finished request is garbage at once.

export interface LiveNode<T> {
  value: T | null;
  prev: LiveNode<T> | null;
  next: LiveNode<T> | null;
}

export class LiveList<T> {
  private head: LiveNode<T> | null = null;
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** Adds `value`; keep the node to remove it. */
  add(value: T): LiveNode<T> {
    const node: LiveNode<T> = { value, prev: null, next: this.head };
    if (this.head) this.head.prev = node;
    this.head = node;
    this.count++;
    return node;
  }

  /** Removes the node (idempotent). */
  remove(node: LiveNode<T>): void {
    if (node.value === null) return;
    if (node.prev) node.prev.next = node.next;
    else this.head = node.next;
    if (node.next) node.next.prev = node.prev;
    node.prev = null;
    node.next = null;
    node.value = null;
    this.count--;
  }

  /** A copy of the current members (safe to remove while going through it). */
  values(): T[] {
    const out: T[] = [];
    for (let n = this.head; n; n = n.next) out.push(n.value as T);
    return out;
  }
}
