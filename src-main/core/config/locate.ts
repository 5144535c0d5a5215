// Maps a field path (from a zod issue) back to a line and column in the YAML
// text, so an error names the place the operator has to edit.

import { isMap, isScalar, isSeq, type Document, type LineCounter, type Node } from 'yaml';

export type FieldPath = readonly PropertyKey[];

export interface Position {
  line: number;
  column: number;
}

/** `hosts[0].ssh.port`; '' for the root. */
export function formatPath(path: FieldPath): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else out += out === '' ? String(seg) : `.${String(seg)}`;
  }
  return out;
}

/**
 * Where `path` is in the document. `target: 'value'` points at the value (the
 * usual case); `'key'` at the key itself (unknown keys). When the path leaves
 * the document (a missing field) it points at the key of the deepest parent that
 * exists, or at the start of that parent when it has no key (a list item).
 */
export function locate(doc: Document, lineCounter: LineCounter, path: FieldPath, target: 'value' | 'key' = 'value'): Position {
  let node: unknown = doc.contents;
  // Where to point if the path leaves the document: the key that led to `node`, or `node`.
  let anchor: Node | null = isNode(node) ? node : null;
  for (let i = 0; i < path.length; i++) {
    const seg = path[i];
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(seg));
      if (!pair) return place(lineCounter, anchor);
      const key = isNode(pair.key) ? pair.key : null;
      if (i === path.length - 1 && target === 'key' && key) return place(lineCounter, key);
      anchor = key ?? anchor;
      // `key:` with nothing after it: the key is the place.
      if (!isNode(pair.value) || isEmptyScalar(pair.value)) return place(lineCounter, anchor);
      node = pair.value;
    } else if (isSeq(node) && typeof seg === 'number' && isNode(node.items[seg])) {
      node = node.items[seg];
      anchor = node as Node;
    } else {
      return place(lineCounter, anchor);
    }
  }
  return place(lineCounter, isNode(node) ? node : anchor);
}

/**
 * The path of the innermost key/item whose source span contains `offset`; used
 * to name the field of a duplicate-key error. Later pairs win, so a duplicate
 * key resolves to the duplicate and not to the first occurrence.
 */
export function pathAtOffset(doc: Document, offset: number): (string | number)[] {
  const path: (string | number)[] = [];
  let node: unknown = doc.contents;
  const contains = (start: number | undefined, end: number | undefined) =>
    start !== undefined && end !== undefined && offset >= start && offset < Math.max(end, start + 1);
  for (;;) {
    if (isMap(node)) {
      const pair = node.items.findLast((p) => {
        const start = isNode(p.key) ? p.key.range?.[0] : undefined;
        const end = isNode(p.value) ? p.value.range?.[1] : isNode(p.key) ? p.key.range?.[1] : undefined;
        return contains(start, end);
      });
      if (!pair || !isScalar(pair.key)) return path;
      path.push(String(pair.key.value));
      node = pair.value;
    } else if (isSeq(node)) {
      const index = node.items.findLastIndex((it) => isNode(it) && contains(it.range?.[0], it.range?.[1]));
      if (index < 0) return path;
      path.push(index);
      node = node.items[index];
    } else {
      return path;
    }
  }
}

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && 'range' in value;
}

function isEmptyScalar(node: Node): boolean {
  return isScalar(node) && node.value === null && (!node.range || node.range[0] === node.range[1]);
}

function place(lineCounter: LineCounter, node: Node | null): Position {
  const offset = node?.range?.[0] ?? 0;
  const { line, col } = lineCounter.linePos(offset);
  return { line, column: col };
}
