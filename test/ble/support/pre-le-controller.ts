/**
 * An HCI controller from before Bluetooth LE over TCP, as an old adapter behind an H4 bridge
 * would be: noble and bleno call it unsupported once the lab has opened its capture and its
 * transport, which is how a host's failed start is tested.
 */
import { type AddressInfo, createServer, type Server, type Socket } from "node:net";
import { H4Framer } from "../../../src/ble/hci/h4-framer.ts";

const READ_LOCAL_VERSION = 0x1001;
/** Bluetooth 2.1: below 4.0 (HCI version 6), so noble and bleno call the adapter unsupported. */
const HCI_VERSION_2_1 = 0x04;

/** Answers Read Local Version (Vol 4 Part E §7.4.1) and nothing else: the hosts need no more. */
export async function preLeController(): Promise<{
  server: Server;
  port: number;
  accepted: Socket[];
}> {
  const accepted: Socket[] = [];
  const server = createServer((socket) => {
    accepted.push(socket);
    const framer = new H4Framer({
      packet: (p) => {
        if (p[0] !== 0x01 || p.readUInt16LE(1) !== READ_LOCAL_VERSION) return;
        // synthetic: Command Complete (0x0e), 1 command allowed, opcode, status 0, then HCI
        // version, revision, LMP version, manufacturer, LMP subversion.
        const v = HCI_VERSION_2_1;
        socket.write(Buffer.from([0x04, 0x0e, 0x0c, 1, 0x01, 0x10, 0, v, 0, 0, v, 0, 0, 0, 0]));
      },
      desync: () => socket.destroy(),
    });
    socket.on("data", (chunk) => framer.push(chunk));
    socket.on("error", () => socket.destroy());
  });
  server.listen(0, "127.0.0.1");
  await new Promise((resolve) => server.once("listening", resolve));
  return { server, port: (server.address() as AddressInfo).port, accepted };
}
