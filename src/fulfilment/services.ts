import type { Rng } from "../core/rng.ts";
import { DeviceActivation } from "./activation.ts";
import type { UndeliverableAddress } from "./address-verification.ts";
import type { DeviceServiceDeps } from "./deps.ts";
import { DeviceProperties } from "./device-properties.ts";
import { DeviceUpdate } from "./device-update.ts";
import { DeviceViews } from "./device-view.ts";
import { GatewayAdoption } from "./gateway-adoption.ts";
import { Gateways } from "./gateways.ts";
import { HardwareLogs } from "./hardware-logs.ts";
import { ReplacementShipping } from "./replacement-shipping.ts";
import { Replacements } from "./replacements.ts";
import { Unlink } from "./unlink.ts";

export interface DeviceServicesDeps extends DeviceServiceDeps {
  readonly rng: Rng;
  readonly undeliverableAddresses?: readonly UndeliverableAddress[];
}

/** Every device-side service of the HWI API, built from one set of dependencies. */
export interface DeviceServices {
  readonly activation: DeviceActivation;
  readonly update: DeviceUpdate;
  readonly views: DeviceViews;
  readonly properties: DeviceProperties;
  readonly gateways: Gateways;
  readonly adoption: GatewayAdoption;
  readonly unlink: Unlink;
  readonly replacements: Replacements;
  readonly replacementShipping: ReplacementShipping;
  readonly hardwareLogs: HardwareLogs;
}

export function createDeviceServices(deps: DeviceServicesDeps): DeviceServices {
  return {
    activation: new DeviceActivation(deps),
    update: new DeviceUpdate(deps),
    views: new DeviceViews(deps),
    properties: new DeviceProperties(deps),
    gateways: new Gateways(deps),
    adoption: new GatewayAdoption(deps),
    unlink: new Unlink(deps),
    replacements: new Replacements(deps),
    replacementShipping: new ReplacementShipping(deps),
    hardwareLogs: new HardwareLogs(deps),
  };
}
