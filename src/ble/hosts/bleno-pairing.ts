/**
 * The virtual devices' SMP (bleno's lib/hci-socket/smp.js, one per connection): where bleno
 * answers pairing wrongly.
 */

const PAIRING_FAILED = 0x05;
/** bleno's reason for a central's Pairing Random that does not match: SMP_PAIRING_CONFIRM's code. */
const AUTHENTICATION_REQUIREMENTS = 0x03;
const CONFIRM_VALUE_FAILED = 0x04;

interface BlenoSmp {
  write(data: Buffer): void;
}

interface BlenoBindings {
  readonly _aclStream?: { readonly _smp?: BlenoSmp } | null;
}

/**
 * On each connection bleno accepts: a central's Pairing Random that does not give its Pairing
 * Confirm is Pairing Failed, Confirm Value Failed (Vol 3 Part H §2.3.5.5, §3.5.5), where bleno
 * wrote its Pairing Confirm opcode (0x03) as the reason, Authentication Requirements, which
 * sends a gateway's log after the wrong cause. bleno sends that reason nowhere else.
 */
export function guardBlenoPairing(bleno: unknown): void {
  const host = bleno as { _bindings?: BlenoBindings; on(event: "accept", f: () => void): void };
  host.on("accept", () => {
    const smp = host._bindings?._aclStream?._smp;
    if (smp === undefined) return;
    const write = smp.write.bind(smp);
    smp.write = (data: Buffer) => {
      const wrongReason =
        data.length === 2 && data[0] === PAIRING_FAILED && data[1] === AUTHENTICATION_REQUIREMENTS;
      write(wrongReason ? Buffer.from([PAIRING_FAILED, CONFIRM_VALUE_FAILED]) : data);
    };
  });
}
