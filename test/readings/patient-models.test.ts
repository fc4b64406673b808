import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { isRpmlabError, type RpmlabError } from "../../src/core/errors.ts";
import { PatientModels } from "../../src/readings/patients.ts";
import { patients } from "./helpers.ts";

const catchError = (fn: () => unknown): RpmlabError => {
  try {
    fn();
  } catch (error) {
    if (isRpmlabError(error)) return error;
    throw error;
  }
  throw new Error("expected an RpmlabError");
};

describe("patient models", () => {
  it("ships the six models, each valid against the schema", () => {
    expect(patients.names.sort()).toEqual([
      "copd",
      "heart-failure",
      "hypertensive",
      "normal",
      "pregnancy",
      "type2-diabetic",
    ]);
  });

  it("gives only the pregnancy model a pregnancy, and episodes to the models that have them", () => {
    const episodes = Object.fromEntries(
      patients.models.map((m) => [m.name, m.episodes.map((e) => e.name)]),
    );
    expect(episodes).toEqual({
      copd: ["exacerbation"],
      "heart-failure": ["fluid_gain"],
      hypertensive: [],
      normal: [],
      pregnancy: [],
      "type2-diabetic": ["hyperglycaemia"],
    });
    expect(
      patients.models.filter((m) => m.physiology.pregnancy !== undefined).map((m) => m.name),
    ).toEqual(["pregnancy"]);
  });

  it("names an unknown model and lists the known ones", () => {
    const error = catchError(() => patients.get("athlete"));
    expect(error.code).toBe("E_PROFILE_NOT_FOUND");
    expect(error.details.field).toBe("patient");
    expect(error.message).toContain("heart-failure");
  });

  it("reports every problem of every file, located by file and path", () => {
    const dir = mkdtempSync(join(tmpdir(), "rpmlab-patients-"));
    writeFileSync(join(dir, "a.yaml"), "name: Bad Name\ndescription: x\n");
    writeFileSync(join(dir, "b.yaml"), "name: [unclosed\n");
    const error = catchError(() => PatientModels.load(dir));
    expect(error.code).toBe("E_PROFILE_INVALID");
    expect(error.message).toMatch(/a\.yaml: name: /);
    expect(error.message).toMatch(/a\.yaml: \(root\)|a\.yaml: timezone_offset/);
    expect(error.message).toMatch(/b\.yaml: \(root\): not valid YAML/);
  });

  it("rejects a reading time that is not HH:MM and an upside-down range", () => {
    const normal = structuredClone(patients.get("normal"));
    const bad = {
      ...normal,
      schedule: { ...normal.schedule, scale: ["7am"] },
      episodes: [
        {
          name: "x",
          every_days: [10, 5],
          onset_days: [1, 2],
          plateau_days: [0, 1],
          recovery_days: [1, 2],
          severity: [0.5, 1],
          effects: { weight_lb: 3 },
        },
      ],
    };
    const dir = mkdtempSync(join(tmpdir(), "rpmlab-patients-"));
    writeFileSync(join(dir, "bad.yaml"), JSON.stringify(bad));
    const error = catchError(() => PatientModels.load(dir));
    expect(error.message).toContain("schedule.scale[0]");
    expect(error.message).toContain("episodes[0].every_days");
  });

  it("names time_zone when it is not an IANA zone, instead of failing at the first reading", () => {
    const dir = mkdtempSync(join(tmpdir(), "rpmlab-patients-"));
    const chicago = { ...patients.get("normal"), time_zone: "America/Chicgo" };
    writeFileSync(join(dir, "typo.yaml"), JSON.stringify(chicago));
    const error = catchError(() => PatientModels.load(dir));
    expect(error.code).toBe("E_PROFILE_INVALID");
    expect(error.message).toMatch(/typo\.yaml: time_zone: .*IANA/);
  });

  it("refuses two models with the same name", () => {
    const normal = patients.get("normal");
    expect(catchError(() => new PatientModels([normal, normal])).code).toBe("E_PROFILE_INVALID");
  });
});
