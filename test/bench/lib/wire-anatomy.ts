// Where the bytes of a delta-coded tick go: each leaf of a wire event is
// charged its own JSON (key, colon, value, comma) under a path with list
// positions and ids folded away (`hosts.patch[].gpus.patch[].set.powerW`,
// series names with their GPU index / service id as `*`), so a bench can print
// which fields change every second and what each costs.

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export class WireAnatomy {
  private readonly bytes = new Map<string, number>();
  private readonly counts = new Map<string, number>();

  /** Charge one wire event (as it goes out: already JSON-safe). */
  add(channel: string, wire: unknown): void {
    this.walk(channel, wire as Json, 0);
  }

  /** The `limit` heaviest paths, heaviest first, as [path, bytes, leaves]. */
  top(limit: number): Array<[string, number, number]> {
    return [...this.bytes.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, limit)
      .map(([path, bytes]) => [path, bytes, this.counts.get(path) ?? 0]);
  }

  private walk(path: string, node: Json, keyBytes: number): void {
    if (Array.isArray(node)) {
      this.charge(path, keyBytes + 2);
      for (const item of node) this.walk(`${path}[]`, item, 1);
      return;
    }
    if (node !== null && typeof node === 'object') {
      this.charge(path, keyBytes + 2);
      const record = /(^|\.)values\.(set|unset)$/.test(path) || path.endsWith('.values');
      for (const [key, value] of Object.entries(node)) {
        const name = record ? key.replace(/^(gpu|svc)\.[^.]+\./, '$1.*.') : key;
        this.walk(`${path}.${name}`, value, Buffer.byteLength(JSON.stringify(key)) + 2);
      }
      return;
    }
    this.charge(path, keyBytes + Buffer.byteLength(JSON.stringify(node)));
    this.counts.set(path, (this.counts.get(path) ?? 0) + 1);
  }

  private charge(path: string, n: number): void {
    this.bytes.set(path, (this.bytes.get(path) ?? 0) + n);
  }
}
