/**
 * A virtual cuff's GATT server (bleno, unmodified, behind the lab's checks) as a central that
 * writes raw ATT sees it: requests bleno answers wrongly, each checked against its Error Response
 * or response (Vol 3 Part F §3.4).
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

describe("the virtual devices' GATT server, to raw ATT", () => {
  it("refuses a write to a characteristic declaration with Write Not Permitted: it no longer reaches the value", async () => {
    const { att } = await connectedCuff();
    const time = await declaration(att, 0x2a2b);
    const [before] = await att(`0a${le16(time.value)}`);
    // A valid Current Time (CTS 1.1 §3.1), written to the declaration's handle.
    const value = "e9070101080000000000";
    expect(await att(`12${le16(time.decl)}${value}`)).toEqual([`0112${le16(time.decl)}03`]);
    expect(await att(`16${le16(time.decl)}0000${value}`)).toEqual([`0116${le16(time.decl)}03`]);
    // A Write Command to it is not answered and changes nothing.
    expect(await att(`52${le16(time.decl)}${value}`)).toEqual([]);
    const [after] = await att(`0a${le16(time.value)}`);
    expect(after!.slice(0, 10)).toBe(before!.slice(0, 10));
    // The value itself still takes writes.
    expect(await att(`12${le16(time.value)}${value}`)).toEqual(["13"]);
  });

  it("answers a read whose value cannot be encoded with Unlikely Error (a device clock run past 9999)", async () => {
    const { att } = await connectedCuff();
    const time = await declaration(att, 0x2a2b);
    // 9999-12-31 23:59:59, the last instant a Date Time holds; a second later the clock is past it.
    expect(await att(`12${le16(time.value)}0f270c1f173b3b050000`)).toEqual(["13"]);
    expect(await att(`0a${le16(time.value)}`)).toEqual([`010a${le16(time.value)}0e`]);
  });

  it("answers a second Exchange MTU Request like the first, as BlueZ, Zephyr and NimBLE do", async () => {
    const { att } = await connectedCuff();
    // Vol 3 Part F §3.4.2.1 has the client send it once; nothing bids the server refuse a second.
    expect(await att("020001")).toEqual(["030001"]);
    expect(await att("020001")).toEqual(["030001"]);
  });

  it("answers an Exchange MTU Request with its own Rx MTU, and a second one cannot raise the ATT_MTU", async () => {
    const { att } = await connectedCuff();
    // Find Information over every handle: as many 4-octet entries as fit in ATT_MTU - 2.
    const entries = async () => (Buffer.from((await att("040100ffff"))[0]!, "hex").length - 2) / 4;
    expect(await entries()).toBe(5);
    // Vol 3 Part F §3.4.2.2: the response carries the Server Rx MTU (bleno's 256), not the
    // client's 50; both sides then take the minimum.
    expect(await att(`02${le16(50)}`)).toEqual([`03${le16(256)}`]);
    expect(await entries()).toBe(12);
    // Once exchanged the server offers the ATT_MTU it has (as BlueZ): a second request for more
    // leaves it, one for less lowers it, and the client's minimum agrees each time.
    expect(await att(`02${le16(256)}`)).toEqual([`03${le16(50)}`]);
    expect(await entries()).toBe(12);
    expect(await att(`02${le16(30)}`)).toEqual([`03${le16(50)}`]);
    expect(await entries()).toBe(7);
  });

  it("answers an Execute Write with nothing prepared with its response, and reserved flags with Invalid PDU", async () => {
    const { att } = await connectedCuff();
    expect(await att("1800")).toEqual(["19"]);
    expect(await att("1801")).toEqual(["19"]);
    expect(await att("1802")).toEqual(["0118000004"]);
    expect(await att("18ff")).toEqual(["0118000004"]);
  });
  it("refuses Read By Type of a value without Read with Read Not Permitted, naming its handle", async () => {
    const { att } = await connectedCuff();
    // Blood Pressure Measurement indicates only: bleno read it through its handler (Unlikely
    // Error, 0x0E); Vol 3 Part F §3.4.4.1 refuses it so, with the attribute's handle.
    const measurement = await declaration(att, 0x2a35);
    expect(await att(`08${le16(1)}ffff352a`)).toEqual([`0108${le16(measurement.value)}02`]);
    // A readable value is still read so, and its CCCD.
    const feature = await declaration(att, 0x2a49);
    const [read] = await att(`08${le16(1)}ffff492a`);
    expect(read!.slice(0, 8)).toBe(`0904${le16(feature.value)}`);
    const ccc = le16(measurement.value + 1);
    expect(await att(`08${ccc}ffff0229`)).toEqual([`0904${ccc}0000`]);
  });

  it("reads by type the attributes within the range asked for: a value by its own handle, never one past the range", async () => {
    const { att } = await connectedCuff();
    const time = await declaration(att, 0x2a2b);
    // A Current Time of 10 octets, at the value's handle.
    const found = `090c${le16(time.value)}`;
    const head = async (hex: string) => (await att(hex)).map((pdu) => pdu.slice(0, 8));
    // The range of the value alone: bleno looked for the declaration, found none, and answered
    // Attribute Not Found (Vol 3 Part F §3.4.4.1: the attributes between and including the two).
    expect(await head(`08${le16(time.value)}${le16(time.value)}2b2a`)).toEqual([found]);
    // The range of the declaration alone: bleno answered the value, past the range's end.
    expect(await att(`08${le16(time.decl)}${le16(time.decl)}2b2a`)).toEqual([
      `0108${le16(time.decl)}0a`,
    ]);
    expect(await head(`08${le16(time.decl)}${le16(time.value)}2b2a`)).toEqual([found]);
  });

  it("takes a 16-bit type written out as 128 bits on the Base UUID, as the 16-bit one", async () => {
    const { att } = await connectedCuff();
    // «Primary Service» and «Characteristic» as 128-bit UUIDs (Vol 3 Part F §3.2.1): bleno
    // compared their spelling, and found none.
    const base = (short: string) => `fb349b5f8000008000100000${short}0000`;
    expect(await att(`100100ffff${base("0028")}`)).toEqual(await att("100100ffff0028"));
    expect(await att(`080100ffff${base("0328")}`)).toEqual(await att("080100ffff0328"));
    const [primary] = await att(`100100ffff${base("0028")}`);
    expect(primary!.slice(0, 2)).toBe("11");
  });

  it("answers a Find By Type Value Request with an empty value Attribute Not Found: bleno threw on it and left it unanswered", async () => {
    const { att } = await connectedCuff();
    // Vol 3 Part F §3.4.3.3: the Attribute Value is 0 to ATT_MTU − 7 octets. No service has an
    // empty UUID, so nothing matches; bleno threw reading the empty value and the central
    // waited out its 30-second ATT timeout.
    expect(await att("060100ffff0028")).toEqual(["010601000a"]);
    expect(await att("060500ffff0128")).toEqual(["010605000a"]);
    // The same request with a service's UUID still finds it.
    const [found] = await att("060100ffff00281018");
    expect(found!.slice(0, 2)).toBe("07");
  });

  it("answers no response, notification or indication a central sends it: only requests get an Error Response", async () => {
    const { att } = await connectedCuff();
    const time = await declaration(att, 0x2a2b);
    // bleno answered each with Request Not Supported, naming as the request in error a PDU
    // that is none (Vol 3 Part F §3.4.1.1: an Error Response states that a request cannot be
    // performed); a central that sent no request takes an unexpected Error Response for a
    // protocol fault (BlueZ drops the link on one).
    for (const pdu of [
      "03ff00",
      "13",
      "0b00",
      `1b${le16(time.value)}00`,
      `1d${le16(time.value)}00`,
    ]) {
      expect(await att(pdu), pdu).toEqual([]);
    }
    // An unknown request is still Request Not Supported.
    expect(await att("3000")).toEqual(["0130000006"]);
  });

  it("answers Read By Group Type of secondary services Attribute Not Found, of «Include» Unsupported Group Type", async () => {
    const { att } = await connectedCuff();
    // bleno had them the other way round (Vol 3 Part G §2.5.3: only services group).
    expect(await att("100100ffff0128")).toEqual(["011001000a"]);
    expect(await att("100100ffff0228")).toEqual(["0110010010"]);
    const [primary] = await att("100100ffff0028");
    expect(primary!.slice(0, 2)).toBe("11");
  });
});

describe("a CCCD on the virtual devices' GATT server, to raw ATT", () => {
  it("refuses Notification on a characteristic that only indicates (and Indication on one that only notifies) with 0xFD, and keeps the CCCD off", async () => {
    const { att } = await connectedCuff();
    // Blood Pressure Measurement indicates only; Battery Level notifies only. Each CCCD follows
    // its value.
    const measurement = (await declaration(att, 0x2a35)).value + 1;
    const battery = (await declaration(att, 0x2a19)).value + 1;
    expect(await att(`12${le16(measurement)}0100`)).toEqual([`0112${le16(measurement)}fd`]);
    expect(await att(`12${le16(measurement)}0300`)).toEqual([`0112${le16(measurement)}fd`]);
    expect(await att(`12${le16(battery)}0200`)).toEqual([`0112${le16(battery)}fd`]);
    // A Write Command of the same is not answered and changes nothing.
    expect(await att(`52${le16(measurement)}0100`)).toEqual([]);
    expect(await att(`0a${le16(measurement)}`)).toEqual(["0b0000"]);
    expect(await att(`0a${le16(battery)}`)).toEqual(["0b0000"]);
    // Reserved bits (past Indication) likewise, as BlueZ refuses them: bleno kept them.
    expect(await att(`12${le16(measurement)}0600`)).toEqual([`0112${le16(measurement)}fd`]);
    expect(await att(`12${le16(battery)}0180`)).toEqual([`0112${le16(battery)}fd`]);
    expect(await att(`0a${le16(measurement)}`)).toEqual(["0b0000"]);
    // The bit the characteristic has is taken.
    expect(await att(`12${le16(measurement)}0200`)).toEqual(["13"]);
    expect(await att(`0a${le16(measurement)}`)).toEqual(["0b0200"]);
    expect(await att(`12${le16(battery)}0100`)).toEqual(["13"]);
  });

  it("takes a Prepare Write to a CCCD (no longer Attribute Not Long) and writes it at the Execute Write", async () => {
    const { att } = await connectedCuff();
    const ccc = le16((await declaration(att, 0x2a35)).value + 1);
    // Queued, echoed, and not written until executed.
    expect(await att(`16${ccc}00000200`)).toEqual([`17${ccc}00000200`]);
    expect(await att(`0a${ccc}`)).toEqual(["0b0000"]);
    expect(await att("1801")).toEqual(["19"]);
    expect(await att(`0a${ccc}`)).toEqual(["0b0200"]);
    // Cancelled, nothing is written.
    expect(await att(`16${ccc}00000000`)).toEqual([`17${ccc}00000000`]);
    expect(await att("1800")).toEqual(["19"]);
    expect(await att(`0a${ccc}`)).toEqual(["0b0200"]);
    // In two parts, octet by octet.
    expect(await att(`16${ccc}000000`)).toEqual([`17${ccc}000000`]);
    expect(await att(`16${ccc}010000`)).toEqual([`17${ccc}010000`]);
    expect(await att("1801")).toEqual(["19"]);
    expect(await att(`0a${ccc}`)).toEqual(["0b0000"]);
  });

  it("checks a CCCD's prepared value at the Execute Write: offset, length, the characteristic's bits", async () => {
    const { att } = await connectedCuff();
    const ccc = le16((await declaration(att, 0x2a35)).value + 1);
    expect(await att(`16${ccc}030000`)).toEqual([`17${ccc}030000`]);
    expect(await att("1801")).toEqual([`0118${ccc}07`]);
    expect(await att(`16${ccc}01000200`)).toEqual([`17${ccc}01000200`]);
    expect(await att("1801")).toEqual([`0118${ccc}0d`]);
    expect(await att(`16${ccc}00000100`)).toEqual([`17${ccc}00000100`]);
    expect(await att("1801")).toEqual([`0118${ccc}fd`]);
    expect(await att(`0a${ccc}`)).toEqual(["0b0000"]);
    // The queue is bounded (64 prepared writes, as NimBLE's).
    for (let i = 0; i < 64; i++) {
      expect(await att(`16${ccc}00000200`)).toEqual([`17${ccc}00000200`]);
    }
    expect(await att(`16${ccc}00000200`)).toEqual([`0116${ccc}09`]);
    expect(await att("1800")).toEqual(["19"]);
    expect(await att(`0a${ccc}`)).toEqual(["0b0000"]);
  });
});

describe("the prepare queue of the virtual devices' GATT server, to raw ATT", () => {
  /** A valid Current Time (CTS 1.1 §3.1): 2025-01-01 08:00:00, in two parts. */
  const time1 = "e907010108";
  const time2 = "0000000000";

  it("queues prepared writes to several attributes and writes them all at the Execute Write", async () => {
    const { att } = await connectedCuff();
    const time = le16((await declaration(att, 0x2a2b)).value);
    const ccc = le16((await declaration(att, 0x2a35)).value + 1);
    // bleno queued one attribute: the second was Unlikely Error (Vol 3 Part F §3.4.6.1).
    expect(await att(`16${time}0000${time1}`)).toEqual([`17${time}0000${time1}`]);
    expect(await att(`16${ccc}00000200`)).toEqual([`17${ccc}00000200`]);
    expect(await att(`16${time}0500${time2}`)).toEqual([`17${time}0500${time2}`]);
    expect(await att("1801")).toEqual(["19"]);
    expect(await att(`0a${ccc}`)).toEqual(["0b0200"]);
    expect((await att(`0a${time}`))[0]!.slice(0, 10)).toBe(`0b${time1.slice(0, 8)}`);
  });

  it("checks a value's offsets and length at the Execute Write, not as its parts come", async () => {
    const { att } = await connectedCuff();
    const time = le16((await declaration(att, 0x2a2b)).value);
    const [before] = await att(`0a${time}`);
    // A part past the end of the value so far: bleno refused it at once as Invalid Offset;
    // §3.4.6.1 takes it and §3.4.6.3 answers the Execute Write so.
    expect(await att(`16${time}0000${time1}`)).toEqual([`17${time}0000${time1}`]);
    expect(await att(`16${time}0600${time2}`)).toEqual([`17${time}0600${time2}`]);
    expect(await att("1801")).toEqual([`0118${time}07`]);
    // 513 octets in parts of 18 (ATT_MTU 23): past the 512 an attribute holds (§3.2.9).
    const part = "00".repeat(18);
    for (let offset = 0; offset < 513; offset += 18) {
      const data = offset + 18 > 513 ? "00".repeat(513 - offset) : part;
      expect(await att(`16${time}${le16(offset)}${data}`)).toEqual([
        `17${time}${le16(offset)}${data}`,
      ]);
    }
    expect(await att("1801")).toEqual([`0118${time}0d`]);
    // Nothing was written, and the queue is empty again.
    expect((await att(`0a${time}`))[0]!.slice(0, 10)).toBe(before!.slice(0, 10));
    expect(await att("1801")).toEqual(["19"]);
  });

  it("answers the Execute Write with the first attribute whose write fails, and writes none after it", async () => {
    const { att } = await connectedCuff();
    const time = le16((await declaration(att, 0x2a2b)).value);
    const ccc = le16((await declaration(att, 0x2a35)).value + 1);
    // A Current Time of 5 octets: the device answers Invalid Attribute Value Length.
    expect(await att(`16${time}0000${time1}`)).toEqual([`17${time}0000${time1}`]);
    expect(await att(`16${ccc}00000200`)).toEqual([`17${ccc}00000200`]);
    expect(await att("1801")).toEqual([`0118${time}0d`]);
    expect(await att(`0a${ccc}`)).toEqual(["0b0000"]);
  });
});
