import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { ControllerServer } from "../../src/ble/controller-server.ts";
import { EmulatedRadio } from "../../src/ble/radio.ts";
import { SystemClock } from "../../src/core/clock.ts";
import { Rng } from "../../src/core/rng.ts";
import { within } from "./support/lab.ts";

const closers: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

describe("ControllerServer (HCI over TCP, H4)", () => {
  it("answers a command sent in pieces, and a byte that is no H4 indicator with Hardware Error", async () => {
    const clock = new SystemClock();
    const radio = new EmulatedRadio(clock, new Rng("tcp"));
    const server = await ControllerServer.listen(radio, "127.0.0.1", 0);
    closers.push(
      () => clock.dispose(),
      () => radio.close(),
      () => server.close(),
    );
    const socket = connect({ host: "127.0.0.1", port: server.port });
    closers.push(() => socket.destroy());
    let got = Buffer.alloc(0);
    const reply = (length: number) =>
      within<Buffer>(5000, `${length} octets`, (done) => {
        const check = (): void => {
          if (got.length >= length) {
            socket.off("data", onData);
            done(got.subarray(0, length));
            got = got.subarray(length);
          }
        };
        const onData = (c: Buffer): void => {
          got = Buffer.concat([got, c]);
          check();
        };
        socket.on("data", onData);
        check();
      });
    await once(socket);
    // synthetic:Vol 4 Part E §7.4.1 Read Local Version Information, in three writes
    for (const piece of ["01", "0110", "00"]) socket.write(Buffer.from(piece, "hex"));
    const cc = await reply(15);
    expect(cc.subarray(0, 7)).toEqual(Buffer.from("040e0c01011000", "hex"));
    socket.write(Buffer.from([0x7f]));
    expect(await reply(4)).toEqual(Buffer.from("04100101", "hex")); // Hardware Error, code 0x01
    // Back in sync with a whole command; then a megabyte of garbage is one loss of sync, answered
    // once (not an event a byte, to buffer), and so is an ACL packet longer than the LE buffer
    // the controller announced (27 octets).
    socket.write(Buffer.from("01011000", "hex"));
    expect((await reply(15)).subarray(0, 7)).toEqual(Buffer.from("040e0c01011000", "hex"));
    socket.write(Buffer.alloc(2 ** 20, 0xff));
    socket.write(Buffer.from("01011000", "hex"));
    expect(await reply(4)).toEqual(Buffer.from("04100101", "hex"));
    expect((await reply(15)).subarray(0, 7)).toEqual(Buffer.from("040e0c01011000", "hex"));
    socket.write(Buffer.concat([Buffer.from("0240001c00", "hex"), Buffer.alloc(28)]));
    socket.write(Buffer.from("01011000", "hex"));
    expect(await reply(4)).toEqual(Buffer.from("04100101", "hex"));
    expect((await reply(15)).subarray(0, 7)).toEqual(Buffer.from("040e0c01011000", "hex"));
  });
});

function once(socket: ReturnType<typeof connect>): Promise<void> {
  return new Promise((resolve) => socket.once("connect", () => resolve()));
}
