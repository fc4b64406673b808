import type { VirtualController } from "../../../src/ble/controller/virtual-controller.ts";
import { EVT, H4 } from "../../../src/ble/hci/constants.ts";

/**
 * A host that writes exact HCI bytes to a controller and records everything it gets back: the
 * Bumble-style two-device fixture for controller tests, with no host stack in between.
 */
export class ScriptedHost {
  readonly received: Buffer[] = [];

  /** `onPacket` sees each packet as it arrives, to answer it (a scripted peer's protocol). */
  constructor(
    readonly controller: VirtualController,
    onPacket?: (packet: Buffer) => void,
  ) {
    controller.attach((packet) => {
      this.received.push(packet);
      onPacket?.(packet);
    });
    // As every host does first: the default mask leaves LE Meta off (Vol 4 Part E §7.3.1).
    this.command(0x0c01, Buffer.from("ffffffffffffff3f", "hex"));
    this.command(0x2001, Buffer.from("1f00000000000000", "hex"));
    this.clear();
  }

  command(opcode: number, params: Uint8Array = new Uint8Array()): void {
    const packet = Buffer.alloc(4 + params.length);
    packet[0] = H4.COMMAND;
    packet.writeUInt16LE(opcode, 1);
    packet[3] = params.length;
    packet.set(params, 4);
    this.controller.receive(packet);
  }

  acl(handle: number, pb: number, data: Uint8Array): void {
    const packet = Buffer.alloc(5 + data.length);
    packet[0] = H4.ACL;
    packet.writeUInt16LE(handle | (pb << 12), 1);
    packet.writeUInt16LE(data.length, 3);
    packet.set(data, 5);
    this.controller.receive(packet);
  }

  /** Events with this code (and LE subevent), oldest first. */
  events(code: number, subevent?: number): Buffer[] {
    return this.received.filter(
      (p) => p[0] === H4.EVENT && p[1] === code && (subevent === undefined || p[3] === subevent),
    );
  }

  /** Status and return parameters of the last Command Complete for `opcode`. */
  complete(opcode: number): { status: number; ret: Buffer } | undefined {
    const hit = this.events(EVT.COMMAND_COMPLETE)
      .filter((p) => p.readUInt16LE(4) === opcode)
      .at(-1);
    return hit === undefined ? undefined : { status: hit[6]!, ret: hit.subarray(7) };
  }

  /** Status of the last Command Status for `opcode`. */
  status(opcode: number): number | undefined {
    const hit = this.events(EVT.COMMAND_STATUS)
      .filter((p) => p.readUInt16LE(5) === opcode)
      .at(-1);
    return hit?.[3];
  }

  acls(): Buffer[] {
    return this.received.filter((p) => p[0] === H4.ACL);
  }

  clear(): void {
    this.received.length = 0;
  }
}
