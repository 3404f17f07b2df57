/**
 * A binary min-heap of timed events. The simulator settles its state lazily: before it answers
 * a request it pops every event due by the simulated now, in time order (ties in insertion order).
 */
export interface Timed {
  at: number;
}

interface Entry<T> {
  at: number;
  seq: number;
  value: T;
}

export class EventQueue<T extends Timed> {
  private readonly heap: Entry<T>[] = [];
  private seq = 0;

  get size(): number {
    return this.heap.length;
  }

  push(value: T): void {
    const heap = this.heap;
    heap.push({ at: value.at, seq: this.seq++, value });
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(i, parent)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  /** Removes and returns the earliest event due at or before `now`, if any. */
  popDue(now: number): T | undefined {
    const top = this.heap[0];
    if (!top || top.at > now) return undefined;
    const last = this.heap.pop() as Entry<T>;
    if (this.heap.length > 0) {
      this.heap[0] = last;
      this.siftDown(0);
    }
    return top.value;
  }

  private siftDown(i: number): void {
    const n = this.heap.length;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < n && this.less(l, m)) m = l;
      if (r < n && this.less(r, m)) m = r;
      if (m === i) return;
      this.swap(i, m);
      i = m;
    }
  }

  private less(a: number, b: number): boolean {
    const x = this.heap[a] as Entry<T>;
    const y = this.heap[b] as Entry<T>;
    return x.at < y.at || (x.at === y.at && x.seq < y.seq);
  }

  private swap(a: number, b: number): void {
    const t = this.heap[a] as Entry<T>;
    this.heap[a] = this.heap[b] as Entry<T>;
    this.heap[b] = t;
  }
}
