/** A direct link's errors read as the BLE path's (the gateway's client over noble) read them. */
import { describe, expect, it } from "vitest";
import { DirectLink } from "../../src/gateway/direct-link.ts";

const time = (write: number, read: () => Uint8Array) =>
  new DirectLink(
    "c0:00:00:00:00:07",
    [
      {
        uuid: "1805",
        characteristics: [
          { uuid: "2A2B", properties: ["read", "write"], write: () => write, read },
        ],
      },
    ],
    () => undefined,
  );

describe("a direct link's ATT errors", () => {
  it("names the ATT error of a refused write, as the BLE path does", async () => {
    const link = time(0x0d, () => new Uint8Array(10));
    await link.discover();
    const refused = link.write("2A2B", new Uint8Array(3));
    await expect(refused).rejects.toMatchObject({ code: "E_BLE_GATT" });
    await expect(refused).rejects.toThrow(
      /c0:00:00:00:00:07: write 2A2B: ATT error 0x0d \(Invalid Attribute Value Length\)$/,
    );
  });

  it("fails a read whose value cannot be encoded with Unlikely Error, as bleno answers it", async () => {
    const link = time(0, () => {
      throw new RangeError("year 10000 is past a Date Time");
    });
    await link.discover();
    const refused = link.read("2A2B");
    await expect(refused).rejects.toMatchObject({ code: "E_BLE_GATT" });
    await expect(refused).rejects.toThrow(/read 2A2B: ATT error 0x0e \(Unlikely Error\)$/);
  });
});
