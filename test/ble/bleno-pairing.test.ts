/**
 * A virtual cuff's SMP (bleno, behind the lab's checks) as a central pairing in raw SMP sees it
 * (Vol 3 Part H §3.5).
 */
import { afterEach, describe, expect, it } from "vitest";
import { c1, s1, TK } from "./support/just-works-responder.ts";
import { type Closers, connectedCuff } from "./support/raw-att-central.ts";

const closers: Closers = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

describe("the virtual devices' pairing, to raw SMP", () => {
  it("fails pairing with Confirm Value Failed when the central's Pairing Random does not match its Confirm", async () => {
    const { smp } = await connectedCuff(closers);
    // Pairing Request: NoInputNoOutput, bonding, 16-octet keys (Just Works).
    const [response] = await smp("01030001100000");
    expect(response!.slice(0, 2)).toBe("02");
    const [confirm] = await smp(`03${"11".repeat(16)}`);
    expect(confirm!.slice(0, 2)).toBe("03");
    // A random that does not give the confirm sent: bleno answered reason 0x03 (Authentication
    // Requirements), where §2.3.5.5 has Confirm Value Failed (0x04, §3.5.5).
    expect(await smp(`04${"22".repeat(16)}`)).toEqual(["0504"]);
  });

  /** Just Works as the initiator (§2.3.5.5), after `preq`: the STK, the Pairing Response, what followed. */
  async function pairAsInitiator(preq: string) {
    const cuff = await connectedCuff(closers);
    const [pres] = await cuff.smp(preq);
    const mrand = Buffer.alloc(16, 0x33);
    const { initiator, responder } = cuff.peers;
    const confirm = (r: Buffer) =>
      c1(TK, r, Buffer.from(pres!, "hex"), Buffer.from(preq, "hex"), initiator, responder);
    const [sconfirm] = await cuff.smp(`03${confirm(mrand).toString("hex")}`);
    const [srandom] = await cuff.smp(`04${mrand.toString("hex")}`);
    const srand = Buffer.from(srandom!.slice(2), "hex");
    expect(sconfirm).toBe(`03${confirm(srand).toString("hex")}`);
    const size = Math.min(Buffer.from(preq, "hex")[4]!, Buffer.from(pres!, "hex")[4]!);
    const stk = s1(TK, srand, mrand).fill(0, size);
    return { ...cuff, pres: pres!, stk };
  }

  it("agrees on the smaller key size: a central of 7-octet keys encrypts with the STK cut to 7 octets", async () => {
    // Pairing Request: NoInputNoOutput, bonding, Max Encryption Key Size 7, EncKey asked.
    const { pres, stk, encrypt } = await pairAsInitiator("01030001070001");
    // bleno's own maximum stays 16; the key is the lesser of the two (Vol 3 Part H §2.3.4,
    // §3.5.1), its octets above 7 zero. bleno kept all 16: the two keys differed and the link
    // dropped at the first encrypted PDU (0x3D, MIC failure).
    expect(pres).toBe("02030001100001");
    expect(await encrypt(stk)).toEqual({ status: 0, enabled: 1 });
  });

  it("tells the kernel the agreed key size with the key it loads (Load Long Term Keys)", async () => {
    // Pairing Request: Max Encryption Key Size 7. bleno loads its STK into the kernel, which
    // answers the controller's LE Long Term Key Request with it and takes the entry's Encryption
    // Key Size as the link's (hci_le_ltk_request_evt: conn->enc_key_size, what L2CAP's key size
    // checks and BT_SECURITY read). bleno wrote the key's length there: 16.
    const { stk, encrypt, mgmtWritten } = await pairAsInitiator("01030001070001");
    const load = mgmtWritten.filter((c) => c.readUInt16LE(0) === 0x0013).at(-1)!;
    expect(load.readUInt16LE(6)).toBe(1); // Key_Count
    // mgmt_ltk_info (mgmt-api.txt): address, type, Key_Type, Central, Encryption_Size, EDIV,
    // Rand, Value; the Value's octets past the size are 0.
    const entry = load.subarray(8);
    expect(entry[9]).toBe(7);
    expect(entry.subarray(20, 36)).toEqual(stk);
    expect(await encrypt(stk)).toEqual({ status: 0, enabled: 1 });
  });

  it("distributes only the keys the central asked for: none asked, none offered or sent", async () => {
    // Responder Key Distribution 0x00 (§3.5.1): bleno offered EncKey all the same (0x01) and sent
    // Encryption Information and Master Identification after encryption, which the central had
    // not asked for; the response's fields are the intersection (§3.6.1).
    const { pres, stk, encrypt, smpSent } = await pairAsInitiator("01030001100000");
    expect(pres).toBe("02030001100000");
    expect(await encrypt(stk)).toEqual({ status: 0, enabled: 1 });
    expect(smpSent()).toEqual([]);
  });

  it("distributes EncKey when asked, its LTK cut to the agreed key size", async () => {
    const { stk, encrypt, smpSent } = await pairAsInitiator("01030001080001");
    expect(await encrypt(stk)).toEqual({ status: 0, enabled: 1 });
    const sent = smpSent();
    expect(sent.map((p) => p.slice(0, 2))).toEqual(["06", "07"]);
    // Encryption Information's LTK (bleno distributes the STK) with its octets above 8 zero.
    expect(Buffer.from(sent[0]!.slice(2), "hex")).toEqual(stk);
  });

  it("refuses a central whose keys are under 7 octets (Encryption Key Size) or over 16 (Invalid Parameters)", async () => {
    const { smp } = await connectedCuff(closers);
    // bleno answered its Pairing Response, and would have encrypted with a 16-octet key.
    expect(await smp("01030001060001")).toEqual(["0506"]);
    expect(await smp("01030001110001")).toEqual(["050a"]);
    expect(await smp("01030001100001")).toEqual(["02030001100001"]);
  });
});
