/**
 * The gateway's GATT client (noble, unmodified, behind the lab's checks) discovering a
 * peripheral whose discovery responses are malformed (support/att-peripheral.ts): handles that
 * do not advance had noble ask for the same range again and again.
 */
import { describe, expect, it } from "vitest";
import { RpmlabError } from "../../src/core/errors.ts";
import { closedAfterEach, gattServer, pattern, settled } from "./support/att-peripheral.ts";

const connected = closedAfterEach();
const hex = (s: string) => Buffer.from(s.replaceAll(" ", ""), "hex");

describe("the gateway's GATT client discovering a peripheral with malformed handles", () => {
  it("fails at once, naming the service whose End Group Handle is below its start", async () => {
    const server = gattServer(23, pattern(4, 1));
    const { clock, link } = await connected(server);
    // Service 0x0005–0x0003, whatever the range asked for: noble asked again from 0x0004, got
    // the same, and looped until the gateway's discovery timeout (Vol 3 Part F §3.4.4.10).
    server.state.servicesResponse = hex("11 06 0500 0300 f0ff");
    const asked = server.state.opcodes.length;
    const outcome = await settled(clock, link.discover());
    expect(outcome).toBeInstanceOf(RpmlabError);
    expect((outcome as RpmlabError).code).toBe("E_BLE_GATT");
    expect((outcome as Error).message).toMatch(
      /discover: service at handle 0x0005 ends at 0x0003, before it starts/,
    );
    expect(server.state.opcodes.length - asked).toBe(1);
  }, 30_000);

  it("fails at once on services that come back before the range asked for", async () => {
    const server = gattServer(23, pattern(4, 2));
    const { clock, link } = await connected(server);
    // The first service again to every request (0x0001–0x0004, not the last): noble asked from
    // 0x0005 and got it once more, without end.
    server.state.servicesResponse = hex("11 06 0100 0400 f0ff");
    const outcome = await settled(clock, link.discover());
    expect((outcome as Error).message).toMatch(
      /discover: service at handle 0x0001 comes before 0x0005/,
    );
  }, 30_000);

  it("fails at once, naming the characteristic whose value handle is not after its declaration", async () => {
    const server = gattServer(23, pattern(4, 3));
    const { clock, link } = await connected(server);
    // Declaration 0x0002 with its value at 0x0001: noble asked again from 0x0002 (Vol 3 Part G
    // §3.3.1, §4.6.1).
    server.state.characteristicsResponse = hex("09 07 0200 1a 0100 f1ff");
    const outcome = await settled(clock, link.discover());
    expect((outcome as Error).message).toMatch(
      /discover: characteristic at handle 0x0002 has its value at 0x0001/,
    );
    // The link serves on: a well-formed discovery succeeds.
    server.state.characteristicsResponse = undefined;
    expect(await settled(clock, link.discover())).toEqual(new Map([["FFF0", ["FFF1"]]]));
  }, 30_000);

  it("finds no services on a peripheral without any, where noble's discovery never ended", async () => {
    const server = gattServer(23, pattern(4, 4));
    const { clock, link } = await connected(server);
    // Attribute Not Found from the first handle (Vol 3 Part G §4.4.1): noble waited for the
    // characteristics of no service, until the gateway's discovery timeout.
    server.state.servicesResponse = hex("01 10 0100 0a");
    expect(await settled(clock, link.discover())).toEqual(new Map());
  }, 30_000);

  it("fails at once on services or characteristics listed with a UUID of neither 16 nor 128 bits", async () => {
    const server = gattServer(23, pattern(4, 5));
    const { clock, link } = await connected(server);
    // Entries of 4 octets, two handles and no UUID: noble read the UUID past the response and
    // threw, leaving its request awaiting a response for ever (Vol 3 Part G §4.4.1).
    server.state.servicesResponse = hex("11 04 0100 0400");
    expect(((await settled(clock, link.discover())) as Error).message).toMatch(
      /discover: services listed in entries of 4 octets, not 6 or 20/,
    );
    // Characteristic declarations of 5 octets, without their UUID (Vol 3 Part G §3.3.1).
    server.state.servicesResponse = undefined;
    server.state.characteristicsResponse = hex("09 05 0200 1a 0300");
    expect(((await settled(clock, link.discover())) as Error).message).toMatch(
      /discover: characteristics listed in entries of 5 octets, not 7 or 21/,
    );
    server.state.characteristicsResponse = undefined;
    expect(await settled(clock, link.discover())).toEqual(new Map([["FFF0", ["FFF1"]]]));
  }, 30_000);
});
