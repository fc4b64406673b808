/**
 * The ASR supply catalogue (spec 2.7 "Supply type"; profiles/supplies.yaml): the shipped list,
 * its ids, the lookups the ASR services use, and bad files rejected with the entry and field.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { SupplyCatalogue, type SupplyType } from "../../src/asr/supply-catalogue.ts";
import { Catalogue } from "../../src/catalogue/catalogue.ts";
import { RpmlabError } from "../../src/core/errors.ts";
import { nameUuid } from "../../src/fulfilment/identifiers.ts";

const devices = Catalogue.load();
const supplies = SupplyCatalogue.load();

const GLUCOMETERS = ["Vendor Glucometer", "Vendor Cellular Glucometer"];

/** The list rpmlab ships: name, strips, hardware_uuid_required, deprecated, compatible devices. */
const SHIPPED: [string, number | null, boolean, boolean, string[]][] = [
  ["Glucometer Test Strips (50)", 50, true, false, GLUCOMETERS],
  ["Glucometer Test Strips (100)", 100, true, false, GLUCOMETERS],
  ["Glucometer Test Strips (25)", 25, true, true, GLUCOMETERS],
  ["Lancets (100)", null, false, false, GLUCOMETERS],
  ["Glucose Control Solution", null, false, false, GLUCOMETERS],
  ["BPM Cuff - Wide Range", null, true, false, ["Vendor BPM - Wide Range", "Vendor Cellular BPM"]],
  ["BPM Cuff - S", null, true, false, ["Vendor BPM - S"]],
  ["BPM Cuff - XL", null, true, false, ["Vendor BPM - XL"]],
  [
    "AA Batteries (4)",
    null,
    false,
    false,
    [
      "Vendor BPM - S",
      "Vendor BPM - Wide Range",
      "Vendor BPM - XL",
      "Vendor Cellular BPM",
      "Vendor Scale",
      "Vendor Scale XL",
      "Vendor Bariatric Scale",
      "Vendor Cellular Scale",
    ],
  ],
  [
    "AAA Batteries (4)",
    null,
    false,
    false,
    [
      "Vendor Pulse Ox",
      "Vendor Cellular Pulse Ox",
      "Vendor BPM - Wrist",
      ...GLUCOMETERS,
      "Vendor Peak Flow Meter",
    ],
  ],
  ["Peak Flow Mouthpieces (10)", null, false, false, ["Vendor Peak Flow Meter"]],
  ["Ultrasound Gel", null, false, false, ["Vendor Fetal Doppler"]],
];

const names = (types: readonly SupplyType[]) => types.map((t) => t.name);

describe("the shipped supply catalogue", () => {
  it("holds the list, in file order, with its flags and compatible devices", () => {
    expect(
      supplies.types.map((t) => [
        t.name,
        t.strips,
        t.hardwareUuidRequired,
        t.deprecated,
        t.compatibleDevices,
      ]),
    ).toEqual(SHIPPED);
  });

  it("every entry is well formed: costs with two decimals, an absolute image URL, current device names", () => {
    for (const t of supplies.types) {
      expect(t.upFrontCost, t.name).toMatch(/^\d+\.\d{2}$/);
      expect(t.shippingCost, t.name).toMatch(/^\d+\.\d{2}$/);
      expect(t.image, t.name).toMatch(
        /^https:\/\/static\.rpmlab\.example\/supplies\/[a-z0-9-]+\.png$/,
      );
      expect(t.description.length, t.name).toBeGreaterThan(0);
      for (const d of t.compatibleDevices) expect(devices.find(d)?.name, t.name).toBe(d);
    }
    // Only strip packs count strips (glucometer_supplies strips_sent adds them up).
    for (const t of supplies.types) {
      expect(t.strips !== null, t.name).toBe(t.name.startsWith("Glucometer Test Strips"));
    }
  });

  it("a cuff states the arm range of the monitors it fits (spec 2.4 cuff sizes)", () => {
    const range = (text: string) => /\((\d+(?:\.\d+)?) to (\d+(?:\.\d+)?) cm/.exec(text)?.slice(1);
    const cuffs = supplies.types.filter((s) => s.name.startsWith("BPM Cuff"));
    expect(cuffs.map((c) => c.name)).toEqual([
      "BPM Cuff - Wide Range",
      "BPM Cuff - S",
      "BPM Cuff - XL",
    ]);
    for (const cuff of cuffs) {
      for (const name of cuff.compatibleDevices) {
        const monitor = range(devices.get(name).description);
        // The cellular cuff's description names its modem, not its cuff.
        if (monitor !== undefined) expect(range(cuff.description), cuff.name).toEqual(monitor);
      }
    }
    expect(range(supplies.byName("BPM Cuff - S")!.description)).toEqual(["16", "36"]);
  });

  it("ids are stable UUID v5s of the name, distinct from every device type and metric id", () => {
    const again = SupplyCatalogue.load();
    expect(again.types.map((t) => t.id)).toEqual(supplies.types.map((t) => t.id));
    // Pinned: ids clients may have stored must not change with the code.
    expect(supplies.byName("Glucometer Test Strips (50)")?.id).toBe(
      "f07fdaff-54f0-5c1e-97c4-2ea9863b90a6",
    );
    const ids = supplies.types.map((t) => t.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab]/);
    const deviceIds = new Set(
      devices.profiles.flatMap((p) => [
        nameUuid(`device-type:${p.name}`),
        ...p.metrics.map((m) => nameUuid(`metric:${m.name}`)),
      ]),
    );
    for (const id of ids) expect(deviceIds.has(id)).toBe(false);
    // A supply named like a device type still gets an id of its own.
    expect(new Set(ids)).not.toContain(nameUuid("Ultrasound Gel"));
  });

  it("byName matches exactly (spec 2.7): another case or spacing is no supply", () => {
    const strips = supplies.byName("Glucometer Test Strips (50)");
    expect(strips?.strips).toBe(50);
    for (const near of [
      "glucometer test strips (50)",
      "GLUCOMETER TEST STRIPS (50)",
      " Glucometer Test Strips (50)",
      "Glucometer Test Strips (50) ",
      "Glucometer  Test Strips (50)",
      "Glucometer Test Strips(50)",
      "Glucometer Test Strips",
      "",
    ]) {
      expect(supplies.byName(near), near).toBeUndefined();
    }
  });

  it("byId finds each type by its id, and nothing else", () => {
    for (const t of supplies.types) expect(supplies.byId(t.id)).toBe(t);
    expect(supplies.byId(nameUuid("device-type:Vendor Glucometer"))).toBeUndefined();
    expect(supplies.byId(supplies.types[0]!.id.toUpperCase())).toBeUndefined();
  });

  it("forDevice lists the compatible types, deprecated ones included", () => {
    const glucometer = [
      "Glucometer Test Strips (50)",
      "Glucometer Test Strips (100)",
      "Glucometer Test Strips (25)",
      "Lancets (100)",
      "Glucose Control Solution",
      "AAA Batteries (4)",
    ];
    expect(names(supplies.forDevice("Vendor Glucometer"))).toEqual(glucometer);
    expect(names(supplies.forDevice("Vendor Cellular Glucometer"))).toEqual(glucometer);
    expect(names(supplies.forDevice("Vendor BPM - S"))).toEqual([
      "BPM Cuff - S",
      "AA Batteries (4)",
    ]);
    expect(names(supplies.forDevice("Vendor BPM - Wrist"))).toEqual(["AAA Batteries (4)"]);
    expect(names(supplies.forDevice("Vendor Cellular BPM"))).toEqual([
      "BPM Cuff - Wide Range",
      "AA Batteries (4)",
    ]);
    for (const none of [
      "Vendor Proximity Band",
      "Vendor Medication Cap",
      "Vendor Inhaler Sensor",
    ]) {
      expect(supplies.forDevice(none), none).toEqual([]);
    }
    expect(supplies.forDevice("No Such Device")).toEqual([]);
  });

  it("forDevice takes a legacy device name as its current one (spec 2.4)", () => {
    expect(supplies.forDevice("Vendor BPM - L")).toEqual(
      supplies.forDevice("Vendor BPM - Wide Range"),
    );
  });
});

// biome-ignore lint/suspicious/noExplicitAny: raw YAML data, edited freely into invalid shapes
type Raw = Record<string, any>;

const entry = (name: string, edit: (e: Raw) => void = () => {}): Raw => {
  const e: Raw = {
    name,
    description: `${name}, for tests`,
    image: "https://static.rpmlab.example/supplies/test.png",
    up_front_cost: "15.00",
    shipping_cost: "5.00",
    hardware_uuid_required: false,
    compatible_devices: ["Vendor Glucometer"],
  };
  edit(e);
  return e;
};

describe("a bad supply file", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "rpmlab-supplies-"));
  });
  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  const write = (data: unknown, raw = false): string => {
    const file = join(dir, "supplies.yaml");
    writeFileSync(file, raw ? String(data) : stringify(data));
    return file;
  };

  /** The E_PROFILE_INVALID error's lines after the heading: "file: path: message". */
  const problems = (file: string): string[] => {
    let error: unknown;
    try {
      SupplyCatalogue.load(file);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(RpmlabError);
    const e = error as RpmlabError;
    expect(e.code).toBe("E_PROFILE_INVALID");
    expect(e.details.file).toBe(file);
    const [heading, ...lines] = e.message.split("\n");
    expect(heading).toBe(`${lines.length} problem(s) in ${file}:`);
    for (const line of lines) expect(line.startsWith(`${file}: `)).toBe(true);
    return lines.map((l) => l.slice(file.length + 2));
  };

  it("a valid file loads, with the defaults (not deprecated, no strips)", () => {
    const file = write({ supplies: [entry("Test Lancets")] });
    const loaded = SupplyCatalogue.load(file);
    expect(loaded.types).toHaveLength(1);
    expect(loaded.byName("Test Lancets")).toMatchObject({
      deprecated: false,
      strips: null,
      upFrontCost: "15.00",
      compatibleDevices: ["Vendor Glucometer"],
    });
  });

  it("an unknown device name names the entry and the field", () => {
    const file = write({
      supplies: [
        entry("Test Lancets"),
        entry("Test Strips", (e) => {
          e.compatible_devices = ["Vendor Glucometer", "Vendor Glucometre"];
        }),
      ],
    });
    expect(problems(file)).toEqual([
      'supplies[1].compatible_devices[1]: supply "Test Strips": unknown device "Vendor Glucometre"',
    ]);
  });

  it('a cost that is not a two-decimal string ("15", 15.5 unquoted) names the entry and the field', () => {
    const file = write({
      supplies: [
        entry("Test Strips", (e) => {
          e.up_front_cost = "15";
        }),
        entry("Test Gel", (e) => {
          e.shipping_cost = 15.5;
        }),
      ],
    });
    expect(problems(file)).toEqual([
      'supplies[0].up_front_cost: supply "Test Strips": a decimal string with two decimals, e.g. "15.00"',
      'supplies[1].shipping_cost: supply "Test Gel": a decimal string with two decimals, quoted in YAML, e.g. "15.00"',
    ]);
  });

  it("reports every problem at once: names, legacy device names, URLs, strips, unknown fields", () => {
    const file = write({
      supplies: [
        entry("Test Strips", (e) => {
          e.strips = 0;
          e.colour = "blue";
        }),
        entry("test  strips"),
        entry("Test Cuff", (e) => {
          e.compatible_devices = ["Vendor BPM - L", "Vendor BPM - L"];
          e.image = "/supplies/cuff.png";
        }),
        entry(" Padded Name"),
        entry("No Devices", (e) => {
          e.compatible_devices = [];
          delete e.hardware_uuid_required;
        }),
      ],
    });
    const lines = problems(file);
    expect(lines).toEqual(
      expect.arrayContaining([
        'supplies[0]: supply "Test Strips": Unrecognized key: "colour"',
        'supplies[1].name: supply "test  strips": the name of supplies[0] already (ignoring case and spaces)',
        'supplies[2].compatible_devices[0]: supply "Test Cuff": "Vendor BPM - L" is a legacy name; use "Vendor BPM - Wide Range"',
        'supplies[2].compatible_devices[1]: supply "Test Cuff": "Vendor BPM - L" is a legacy name; use "Vendor BPM - Wide Range"',
        'supplies[2].image: supply "Test Cuff": an absolute http(s) URL',
        'supplies[3].name: supply " Padded Name": no leading or trailing spaces',
      ]),
    );
    expect(lines.some((l) => l.startsWith('supplies[0].strips: supply "Test Strips": '))).toBe(
      true,
    );
    expect(
      lines.some((l) => l.startsWith('supplies[4].compatible_devices: supply "No Devices"')),
    ).toBe(true);
    expect(
      lines.some((l) => l.startsWith('supplies[4].hardware_uuid_required: supply "No Devices"')),
    ).toBe(true);
  });

  it("a device listed twice, and an entry without a name, still name the field", () => {
    const file = write({
      supplies: [
        entry("Test Gel", (e) => {
          e.compatible_devices = ["Vendor Fetal Doppler", "Vendor Fetal Doppler"];
        }),
        entry("", (e) => {
          delete e.name;
        }),
      ],
    });
    const lines = problems(file);
    expect(lines[0]).toBe(
      'supplies[0].compatible_devices[1]: supply "Test Gel": "Vendor Fetal Doppler" is listed twice',
    );
    expect(lines[1]).toMatch(/^supplies\[1\]\.name: [^s]/);
  });

  it("not YAML, no supplies key, an empty list and a missing file are each one clear problem", () => {
    expect(problems(write("supplies: [\n  - name: x\n", true))[0]).toMatch(
      /^\(root\): cannot read: /,
    );
    expect(problems(write({ items: [] }))).toEqual(
      expect.arrayContaining([expect.stringMatching(/^supplies: /)]),
    );
    expect(problems(write({ supplies: [] }))[0]).toMatch(/^supplies: /);
    rmSync(dir, { recursive: true, force: true });
    expect(problems(join(dir, "supplies.yaml"))[0]).toMatch(/^\(root\): cannot read: ENOENT/);
  });

  it("compatible devices are checked against the catalogue given", () => {
    const file = write({ supplies: [entry("Test Strips")] });
    const withoutGlucometer = new Catalogue(
      devices.profiles.filter((p) => p.name !== "Vendor Glucometer"),
    );
    expect(() => SupplyCatalogue.load(file, withoutGlucometer)).toThrow(
      /unknown device "Vendor Glucometer"/,
    );
  });
});
