import type { Clock } from "../../core/clock.ts";
import { RpmlabError } from "../../core/errors.ts";
import { type BdAddr, bdAddrToWire } from "../hci/address.ts";
import { EVT, H4, OP } from "../hci/constants.ts";
import type { HciTransport } from "./transport.ts";

/** How long the controller has to answer (wall ms): it answers a command at once. */
const ANSWER_MS = 5000;

/**
 * Sets the public address of the controller at the far end of `transport` before a host stack
 * takes it over: Broadcom's vendor Write_BD_ADDR (constants.ts), which `rpmlab controller`'s
 * controllers answer as a BCM chip does. A device then advertises the address a gateway's
 * whitelist names. Rejects with E_BLE_TRANSPORT when the controller refuses or does not answer.
 */
export function writeBdAddr(transport: HciTransport, address: BdAddr, clock: Clock): Promise<void> {
  const opcode = OP.VENDOR_WRITE_BD_ADDR;
  const refused = (why: string) =>
    new RpmlabError("E_BLE_TRANSPORT", `the controller did not take address ${address}: ${why}`, {
      field: "address",
    });
  return new Promise((resolve, reject) => {
    const timer = clock.setTimeout(() => reject(refused("no answer")), ANSWER_MS);
    const settle = (status: number) => {
      clock.clearTimeout(timer);
      if (status === 0) resolve();
      else
        reject(
          refused(
            `status 0x${status.toString(16).padStart(2, "0")} (a controller without Broadcom's Write_BD_ADDR, or one on the air)`,
          ),
        );
    };
    transport.setReceiver((packet) => {
      if (packet[0] !== H4.EVENT || packet.length < 7) return;
      // Command Complete: num, opcode, status (Vol 4 Part E §7.7.14); Command Status: status,
      // num, opcode (§7.7.15) — how some controllers refuse an unknown vendor command.
      if (packet[1] === EVT.COMMAND_COMPLETE && packet.readUInt16LE(4) === opcode)
        settle(packet[6]!);
      if (
        packet[1] === EVT.COMMAND_STATUS &&
        packet.readUInt16LE(5) === opcode &&
        packet[3] !== 0
      ) {
        settle(packet[3]!);
      }
    });
    const command = Buffer.alloc(4 + 6);
    command[0] = H4.COMMAND;
    command.writeUInt16LE(opcode, 1);
    command[3] = 6;
    command.set(bdAddrToWire(address), 4);
    transport.send(command);
  });
}
