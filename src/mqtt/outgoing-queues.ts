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

/**
 * The slots of one key: a single slot as a rule (a packet id or a broker counter is used by one
 * packet at a time), an array in the rare case of several. No Set per packet: every packet in
 * flight stays in these maps until its PUBACK, and the ingestion core holds thousands of PUBACKs
 * for as long as a commit takes, so each object per packet is garbage-collector work.
 */
type Slots = Slot | Slot[];

function index<K>(map: Map<K, Slots>, key: K, slot: Slot): void {
  const slots = map.get(key);
  if (slots === undefined) map.set(key, slot);
  else if (Array.isArray(slots)) slots.push(slot);
  else map.set(key, [slots, slot]);
}

function unindex<K>(map: Map<K, Slots>, key: K, slot: Slot): void {
  const slots = map.get(key);
  if (slots === slot) {
    map.delete(key);
  } else if (Array.isArray(slots)) {
    const at = slots.indexOf(slot);
    if (at >= 0) slots.splice(at, 1);
    if (slots.length === 1) map.set(key, slots[0]!);
  }
}

/** The slot of `slots` first in queue order that `accept`s. */
function first(slots: Slots | undefined, accept: (s: Slot) => boolean = () => true) {
  if (slots === undefined) return undefined;
  if (!Array.isArray(slots)) return accept(slots) ? slots : undefined;
  let found: Slot | undefined;
  for (const slot of slots) {
    if (accept(slot) && (found === undefined || slot.seq < found.seq)) found = slot;
  }
  return found;
}

/** Slots by broker id, then by that broker's counter: no key string made per packet. */
class CounterIndex {
  private readonly byBroker = new Map<string | undefined, Map<number | undefined, Slots>>();

  add(slot: Slot): void {
    const { brokerId, brokerCounter } = slot.packet;
    let counters = this.byBroker.get(brokerId);
    if (counters === undefined) {
      counters = new Map();
      this.byBroker.set(brokerId, counters);
    }
    index(counters, brokerCounter, slot);
  }

  remove(slot: Slot): void {
    const { brokerId, brokerCounter } = slot.packet;
    const counters = this.byBroker.get(brokerId);
    if (counters === undefined) return;
    unindex(counters, brokerCounter, slot);
    if (counters.size === 0) this.byBroker.delete(brokerId);
  }

  first(packet: OutgoingPacket): Slot | undefined {
    return first(this.byBroker.get(packet.brokerId)?.get(packet.brokerCounter));
  }
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
  private readonly byCounter = new CounterIndex();
  /** Packets not yet given an id are under `undefined`, as the linear scans match them too. */
  private readonly byMessageId = new Map<number | undefined, Slots>();

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
    const same = this.byCounter.first(packet);
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
    this.byCounter.add(slot);
    index(this.byMessageId, slot.packet.messageId, slot);
  }

  private remove(slot: Slot): void {
    this.byCounter.remove(slot);
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
