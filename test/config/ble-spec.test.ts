import { describe, expect, it } from "vitest";
import { parseBleSpec, parseListenSpec } from "../../src/config/ble-spec.ts";
import { isRpmlabError } from "../../src/core/errors.ts";

describe("BLE spec strings", () => {
  it("parses emulated, hci:N and tcp://host:port", () => {
    expect(parseBleSpec("emulated")).toEqual({ kind: "emulated" });
    expect(parseBleSpec("hci:1")).toEqual({ kind: "hci", devId: 1 });
    expect(parseBleSpec("hci0")).toEqual({ kind: "hci", devId: 0 });
    expect(parseBleSpec("tcp://127.0.0.1:6402")).toEqual({
      kind: "tcp",
      host: "127.0.0.1",
      port: 6402,
    });
    expect(parseBleSpec("tcp://[::1]:6402")).toEqual({ kind: "tcp", host: "::1", port: 6402 });
  });

  it("refuses the rest with E_CONFIG_INVALID", () => {
    for (const bad of [
      "",
      "usb:1",
      "hci:",
      "tcp://127.0.0.1",
      "tcp://127.0.0.1:0",
      "tcp://h:70000",
      "tcp://h:1/x",
    ]) {
      let error: unknown;
      try {
        parseBleSpec(bad);
      } catch (e) {
        error = e;
      }
      expect(isRpmlabError(error, "E_CONFIG_INVALID"), bad).toBe(true);
    }
  });

  it("a listener may take port 0", () => {
    expect(parseListenSpec("tcp://127.0.0.1:0")).toEqual({ host: "127.0.0.1", port: 0 });
  });

  it("names the flag and, for a port out of range, the port and the range", () => {
    const message = (parse: () => unknown) => {
      try {
        parse();
      } catch (e) {
        return (e as Error).message;
      }
      return "parsed";
    };
    expect(message(() => parseListenSpec("tcp://127.0.0.1:70000"))).toBe(
      '--listen "tcp://127.0.0.1:70000": port 70000 is not from 0 to 65535',
    );
    expect(message(() => parseBleSpec("tcp://127.0.0.1:99999"))).toBe(
      '--ble "tcp://127.0.0.1:99999": port 99999 is not from 1 to 65535',
    );
    expect(message(() => parseBleSpec("usb:1"))).toMatch(/^--ble "usb:1": expected emulated/);
  });
});
