/**
 * The virtual devices' GATT server and the ATT_MTU, as a central that writes raw ATT sees it:
 * no PDU is longer than the ATT_MTU (Vol 3 Part F §3.2.8, §3.4.2.2).
 */
import { afterEach, describe, expect, it } from "vitest";
import {
  type Closers,
  connectedCuff as connectedTo,
  declaration,
  le16,
} from "./support/raw-att-central.ts";

const closers: Closers = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});
const connectedCuff = () => connectedTo(closers);

/** A Current Time (CTS 1.1 §3.1), 2025-01-01 08:00:00, and a second one. */
const time = "e9070101080000000000";
const later = "e9070101090000000000";

describe("the virtual devices' GATT server, to PDUs longer than the ATT_MTU", () => {
  it("refuses a Write Request past ATT_MTU 23 with Invalid PDU, and drops such a Write Command", async () => {
    const { att } = await connectedCuff();
    const cts = le16((await declaration(att, 0x2a2b)).value);
    // 3 + 21 octets: one past the default ATT_MTU (Vol 3 Part G §5.2.1). bleno took it as it came.
    const long = `12${cts}${time}${"00".repeat(11)}`;
    expect(await att(long)).toEqual(["0112000004"]);
    expect(await att(`52${cts}${later}${"00".repeat(11)}`)).toEqual([]);
    // A read longer than the ATT_MTU likewise; one within it is answered.
    expect(await att(`0a${cts}${"00".repeat(21)}`)).toEqual(["010a000004"]);
    expect(await att(`12${cts}${time}`)).toEqual(["13"]);
    const [read] = await att(`0a${cts}`);
    expect(read!.slice(0, 12)).toBe(`0b${time.slice(0, 10)}`);
  });

  it("takes PDUs up to the ATT_MTU agreed by Exchange MTU (its own 256 at most), and refuses longer", async () => {
    const { att } = await connectedCuff();
    const cts = le16((await declaration(att, 0x2a2b)).value);
    // The Server Rx MTU it answers is what it then takes: min(300, 256).
    expect(await att(`02${le16(300)}`)).toEqual([`03${le16(256)}`]);
    // 256 octets: answered by the characteristic (a Current Time is 10 octets).
    expect(await att(`12${cts}${"00".repeat(253)}`)).toEqual([`0112${cts}0d`]);
    expect(await att(`12${cts}${"00".repeat(254)}`)).toEqual(["0112000004"]);
  });
});
