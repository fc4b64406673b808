/**
 * Min-heap of scheduled events ordered by (time, insertion sequence): events due at the same
 * virtual time run in the order they were scheduled, which keeps virtual runs deterministic.
 */
export interface ScheduledEvent {
  readonly id: number;
  readonly at: number;
  readonly seq: number;
  readonly run: () => void;
}

function before(a: ScheduledEvent, b: ScheduledEvent): boolean {
  return a.at < b.at || (a.at === b.at && a.seq < b.seq);
}

export class EventQueue {
  private readonly heap: ScheduledEvent[] = [];
  /** Ids of events still in the heap and not cancelled. */
  private readonly live = new Set<number>();
  private readonly cancelled = new Set<number>();

  get size(): number {
    return this.live.size;
  }

  push(event: ScheduledEvent): void {
    const heap = this.heap;
    heap.push(event);
    this.live.add(event.id);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  cancel(id: number): void {
    // Lazy deletion: the event stays in the heap and is dropped when it reaches the head.
    if (this.live.delete(id)) this.cancelled.add(id);
  }

  /** The next live event, without removing it. */
  peek(): ScheduledEvent | undefined {
    this.dropCancelledHead();
    return this.heap[0];
  }

  pop(): ScheduledEvent | undefined {
    this.dropCancelledHead();
    const head = this.removeHead();
    if (head !== undefined) this.live.delete(head.id);
    return head;
  }

  private dropCancelledHead(): void {
    while (this.heap.length > 0 && this.cancelled.has(this.heap[0]!.id)) {
      this.cancelled.delete(this.heap[0]!.id);
      this.removeHead();
    }
  }

  private removeHead(): ScheduledEvent | undefined {
    const heap = this.heap;
    const head = heap[0];
    const last = heap.pop();
    if (head === undefined || last === undefined || heap.length === 0) return head;
    heap[0] = last;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let smallest = i;
      if (left < heap.length && before(heap[left]!, heap[smallest]!)) smallest = left;
      if (right < heap.length && before(heap[right]!, heap[smallest]!)) smallest = right;
      if (smallest === i) break;
      [heap[i], heap[smallest]] = [heap[smallest]!, heap[i]!];
      i = smallest;
    }
    return head;
  }
}
