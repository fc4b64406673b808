/**
 * The embedded broker's indexed outgoing queues (src/mqtt/outgoing-queues.ts) against the
 * linear ones of aedes' own in-memory persistence: the same operations, the same answers, the
 * same queues. Both come from real aedes instances: the reference is left as aedes made it.
 */
import type { Readable } from "node:stream";
import { Aedes } from "aedes";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { indexOutgoingQueues } from "../../src/mqtt/outgoing-queues.ts";

interface Packet {
  cmd?: string;
  brokerId?: string;
  brokerCounter?: number;
  messageId?: number;
  topic?: string;
  qos?: number;
  payload?: Buffer;
}

interface Outgoing {
  outgoingEnqueue(sub: { clientId: string }, packet: Packet): Promise<void>;
  outgoingEnqueueCombi(subs: { clientId: string }[], packet: Packet): Promise<void>;
  outgoingUpdate(client: { id: string }, packet: Packet): Promise<void>;
  outgoingClearMessageId(client: { id: string }, packet: Packet): Promise<Packet | undefined>;
  outgoingStream(client: { id: string }): Readable;
}

type Op =
  | { kind: "enqueue"; clients: string[]; broker: string; counter: number }
  | { kind: "update"; client: string; broker: string | undefined; counter: number; id: number }
  | { kind: "pubrel"; client: string; id: number }
  | { kind: "clear"; client: string; id: number | undefined };

const client = fc.constantFrom("c1", "c2");
const broker = fc.constantFrom("b1", "b2");
const id = fc.integer({ min: 1, max: 6 });
const counter = fc.integer({ min: 1, max: 12 });
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    kind: fc.constant("enqueue" as const),
    clients: fc.uniqueArray(client, { minLength: 1, maxLength: 2 }),
    broker,
    counter,
  }),
  fc.record({
    kind: fc.constant("update" as const),
    client,
    broker: fc.option(broker, { nil: undefined }),
    counter,
    id,
  }),
  fc.record({ kind: fc.constant("pubrel" as const), client, id }),
  fc.record({ kind: fc.constant("clear" as const), client, id: fc.option(id, { nil: undefined }) }),
);

async function brokerPersistence(
  indexed: boolean,
): Promise<{ store: Outgoing; close(): Promise<void> }> {
  const aedes = await Aedes.createBroker();
  if (indexed) expect(indexOutgoingQueues(aedes)).toBe(true);
  const store = (aedes as unknown as { persistence: { asyncPersistence: Outgoing } }).persistence
    .asyncPersistence;
  return { store, close: () => new Promise((resolve) => aedes.close(() => resolve())) };
}

/** What a step answered, and each client's queue after it, as comparable data. */
async function step(store: Outgoing, o: Op): Promise<unknown> {
  const show = (p: Packet | undefined) =>
    p === undefined ? null : [p.cmd, p.brokerId, p.brokerCounter, p.messageId, p.topic];
  let answer: unknown;
  try {
    if (o.kind === "enqueue") {
      const packet: Packet = {
        cmd: "publish",
        brokerId: o.broker,
        brokerCounter: o.counter,
        topic: `t/${o.counter}`,
        qos: 1,
        // The sender's packet id: the queue's copy must not keep it (ids are per client).
        messageId: (o.counter % 3) + 1,
        payload: Buffer.from("x"),
      };
      if (o.clients.length === 1) await store.outgoingEnqueue({ clientId: o.clients[0]! }, packet);
      else
        await store.outgoingEnqueueCombi(
          o.clients.map((clientId) => ({ clientId })),
          packet,
        );
    } else if (o.kind === "update") {
      const packet = {
        cmd: "publish",
        brokerId: o.broker,
        brokerCounter: o.counter,
        messageId: o.id,
      };
      await store.outgoingUpdate({ id: o.client }, packet);
    } else if (o.kind === "pubrel") {
      await store.outgoingUpdate({ id: o.client }, { cmd: "pubrel", messageId: o.id });
    } else {
      answer = show(await store.outgoingClearMessageId({ id: o.client }, { messageId: o.id }));
    }
  } catch (error) {
    answer = `throws ${(error as Error).message}`;
  }
  const queues: unknown[] = [];
  for (const c of ["c1", "c2"]) {
    const packets: Packet[] = [];
    for await (const p of store.outgoingStream({ id: c })) packets.push(p as Packet);
    queues.push(packets.map(show));
  }
  return { answer, queues };
}

describe("indexed outgoing queues of the embedded broker", () => {
  it("answer every operation as aedes-persistence's linear queues do", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 60 }), async (ops) => {
        const reference = await brokerPersistence(false);
        const indexed = await brokerPersistence(true);
        try {
          for (const o of ops) {
            expect(await step(indexed.store, o)).toEqual(await step(reference.store, o));
          }
        } finally {
          await reference.close();
          await indexed.close();
        }
      }),
      { numRuns: 150 },
    );
  });

  it("keep the queue's own copy: ids given to one client's packet do not leak to another's", async () => {
    const { store, close } = await brokerPersistence(true);
    try {
      const packet = { cmd: "publish", brokerId: "b", brokerCounter: 1, topic: "t", qos: 1 };
      await store.outgoingEnqueueCombi([{ clientId: "a" }, { clientId: "b" }], packet);
      await store.outgoingUpdate({ id: "a" }, { ...packet, messageId: 7 });
      const ids = async (c: string) => {
        const out: (number | undefined)[] = [];
        for await (const p of store.outgoingStream({ id: c })) out.push((p as Packet).messageId);
        return out;
      };
      expect(await ids("a")).toEqual([7]);
      expect(await ids("b")).toEqual([undefined]);
      expect(packet).not.toHaveProperty("messageId");
    } finally {
      await close();
    }
  });
});
