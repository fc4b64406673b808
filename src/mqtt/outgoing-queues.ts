import { Readable } from "node:stream";

/** The fields of an outgoing packet (aedes-packet's Packet) the queue looks at. */
interface OutgoingPacket {
  brokerId?: string;
  brokerCounter?: number;
  messageId?: number;
  qos?: number;
  cmd?: string;
}

interface Slot {
  readonly seq: number;
  packet: OutgoingPacket;
}

/** The outgoing methods of aedes-persistence 11's in-memory persistence (asyncPersistence.js). */
interface OutgoingMethods {
  outgoingEnqueue(sub: { clientId: string }, packet: OutgoingPacket): Promise<void>;
  outgoingEnqueueCombi(
    subs: readonly { clientId: string }[],
    packet: OutgoingPacket,
  ): Promise<void>;
  outgoingUpdate(client: { id: string }, packet: OutgoingPacket): Promise<void>;
  outgoingClearMessageId(
    client: { id: string },
    packet: OutgoingPacket,
  ): Promise<OutgoingPacket | undefined>;
  outgoingStream(client: { id: string }): Readable;
}

const counterKey = (p: OutgoingPacket) => `${p.brokerId}\u0000${p.brokerCounter}`;

function index<K>(map: Map<K, Set<Slot>>, key: K, slot: Slot): void {
  const set = map.get(key);
  if (set === undefined) map.set(key, new Set([slot]));
  else set.add(slot);
}

function unindex<K>(map: Map<K, Set<Slot>>, key: K, slot: Slot): void {
  const set = map.get(key);
  if (set?.delete(slot) && set.size === 0) map.delete(key);
}

/** The slot of `set` first in queue order (sets hold one slot as a rule) that `accept`s. */
function first(set: Set<Slot> | undefined, accept: (s: Slot) => boolean = () => true) {
  let found: Slot | undefined;
  for (const slot of set ?? [])
    if (accept(slot) && (found === undefined || slot.seq < found.seq)) found = slot;
  return found;
}

/**
 * One persistent session's QoS 1/2 packets waiting for their acknowledgement, in order, with
 * the lookups aedes makes indexed. Same answers as aedes-persistence's linear scans: update
 * gives the packet id to the first packet of the same broker and counter, or replaces the first
 * packet of another broker with that id, whichever comes first; clear removes the first packet
 * with the id.
 */
export class ClientQueue {
  private seq = 0;
  private readonly slots = new Map<number, Slot>();
  private readonly byCounter = new Map<string, Set<Slot>>();
  /** Packets not yet given an id are under `undefined`, as the linear scans match them too. */
  private readonly byMessageId = new Map<number | undefined, Set<Slot>>();

  get size(): number {
    return this.slots.size;
  }

  push(packet: OutgoingPacket): void {
    const slot: Slot = { seq: this.seq++, packet };
    this.slots.set(slot.seq, slot);
    this.add(slot);
  }

  /** False when no packet matches (aedes then reports "no such packet"). */
  update(packet: OutgoingPacket): boolean {
    const same = first(this.byCounter.get(counterKey(packet)));
    const other = first(
      this.byMessageId.get(packet.messageId),
      (s) => s.packet.brokerId !== packet.brokerId,
    );
    const target =
      same === undefined || (other !== undefined && other.seq < same.seq) ? other : same;
    if (target === undefined) return false;
    this.remove(target);
    if (target === same) target.packet.messageId = packet.messageId;
    else target.packet = packet;
    this.add(target);
    return true;
  }

  clear(messageId: number | undefined): OutgoingPacket | undefined {
    const slot = first(this.byMessageId.get(messageId));
    if (slot === undefined) return undefined;
    this.remove(slot);
    this.slots.delete(slot.seq);
    return slot.packet;
  }

  packets(): OutgoingPacket[] {
    return [...this.slots.values()].map((s) => s.packet);
  }

  private add(slot: Slot): void {
    index(this.byCounter, counterKey(slot.packet), slot);
    index(this.byMessageId, slot.packet.messageId, slot);
  }

  private remove(slot: Slot): void {
    unindex(this.byCounter, counterKey(slot.packet), slot);
    unindex(this.byMessageId, slot.packet.messageId, slot);
  }
}

/**
 * The queue's own copy of a packet, as aedes-packet's `new Packet(original)` makes it: the
 * packet id is given per client later (outgoingUpdate), so a QoS > 0 copy starts without one.
 */
function queued(packet: OutgoingPacket): OutgoingPacket {
  const copy = { ...packet };
  if ((packet.qos ?? 0) > 0 || (packet.cmd ?? "publish") !== "publish") copy.messageId = undefined;
  return copy;
}

/**
 * aedes' default in-memory persistence keeps each persistent session's unacknowledged packets
 * in an array it scans from the start on every delivery (outgoingUpdate: the new packet is at
 * the end) and every PUBACK: O(n) per packet in the packets in flight. The ingestion core
 * acknowledges only once its batch is committed ([MQTT-4.3.2-2], src/ingest/ack-gate.ts), so
 * thousands are in flight, and the broker spent more time scanning than delivering
 * (test/bench/ingest.ts). This replaces the outgoing methods of that persistence instance with
 * indexed queues (ClientQueue). Other persistences, and other aedes-persistence versions whose
 * memory store does not look the same, are left alone.
 */
export function indexOutgoingQueues(broker: unknown): boolean {
  const persistence = (broker as { persistence?: { asyncPersistence?: unknown } }).persistence;
  const store = persistence?.asyncPersistence as Partial<OutgoingMethods> | undefined;
  const isMemory = store?.constructor?.name === "MemoryPersistence";
  if (store === undefined || !isMemory || typeof store.outgoingUpdate !== "function") return false;
  const queues = new Map<string, ClientQueue>();
  const queue = (clientId: string) => {
    let q = queues.get(clientId);
    if (q === undefined) {
      q = new ClientQueue();
      queues.set(clientId, q);
    }
    return q;
  };
  const methods: OutgoingMethods = {
    async outgoingEnqueue(sub, packet) {
      queue(sub.clientId).push(queued(packet));
    },
    async outgoingEnqueueCombi(subs, packet) {
      for (const sub of subs) queue(sub.clientId).push(queued(packet));
    },
    async outgoingUpdate(client, packet) {
      if (!queue(client.id).update(packet)) throw new Error("no such packet");
    },
    async outgoingClearMessageId(client, packet) {
      return queues.get(client.id)?.clear(packet.messageId);
    },
    outgoingStream(client) {
      return Readable.from(queues.get(client.id)?.packets() ?? []);
    },
  };
  Object.assign(store, methods);
  return true;
}
