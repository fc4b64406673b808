import { EventEmitter } from "node:events";

/** Map of event name → payload type. */
export type EventMap = Record<string, unknown>;

type Listener<T> = (payload: T) => void;

/**
 * A typed wrapper over Node's EventEmitter: one payload per event, checked at compile time.
 * A listener that throws is reported through `error` listeners instead of stopping the emitter.
 */
export class TypedEvents<Events extends EventMap> {
  private readonly emitter = new EventEmitter();

  on<K extends keyof Events & string>(name: K, listener: Listener<Events[K]>): () => void {
    this.emitter.on(name, listener);
    return () => this.emitter.off(name, listener);
  }

  once<K extends keyof Events & string>(name: K, listener: Listener<Events[K]>): void {
    this.emitter.once(name, listener);
  }

  emit<K extends keyof Events & string>(name: K, payload: Events[K]): void {
    for (const listener of this.emitter.rawListeners(name) as Listener<Events[K]>[]) {
      try {
        listener(payload);
      } catch (error) {
        if (this.emitter.listenerCount("error") === 0) throw error;
        this.emitter.emit("error", error);
      }
    }
  }

  onError(listener: (error: unknown) => void): () => void {
    this.emitter.on("error", listener);
    return () => this.emitter.off("error", listener);
  }

  removeAll(): void {
    this.emitter.removeAllListeners();
  }
}
