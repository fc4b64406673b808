import { fileURLToPath } from "node:url";
import { loadYamlDirOrThrow } from "../catalogue/loader.ts";
import { RpmlabError } from "../core/errors.ts";
import { type PatientModel, patientModelSchema } from "./patient-schema.ts";

/** The shipped patient models, beside src/ in the package. */
export const DEFAULT_PATIENTS_DIR = fileURLToPath(
  new URL("../../profiles/patients", import.meta.url),
);

/** Every patient physiology model by name (profiles/patients/*.yaml). */
export class PatientModels {
  private readonly byName = new Map<string, PatientModel>();

  constructor(readonly models: readonly PatientModel[]) {
    for (const model of models) {
      if (this.byName.has(model.name)) {
        throw new RpmlabError(
          "E_PROFILE_INVALID",
          `patient model "${model.name}" is defined twice`,
          {
            field: "name",
          },
        );
      }
      this.byName.set(model.name, model);
    }
  }

  /** Loads and validates every model of a folder, reporting every problem of every file at once. */
  static load(dir: string = DEFAULT_PATIENTS_DIR): PatientModels {
    return new PatientModels(loadYamlDirOrThrow(dir, patientModelSchema).map((item) => item.value));
  }

  get names(): string[] {
    return [...this.byName.keys()];
  }

  find(name: string): PatientModel | undefined {
    return this.byName.get(name);
  }

  /** Like find, but throws E_PROFILE_NOT_FOUND listing the known models. */
  get(name: string): PatientModel {
    const model = this.byName.get(name);
    if (model === undefined) {
      throw new RpmlabError(
        "E_PROFILE_NOT_FOUND",
        `unknown patient model "${name}"; known: ${this.names.join(", ")}`,
        { field: "patient" },
      );
    }
    return model;
  }
}
