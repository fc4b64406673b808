import { z } from "zod";
import {
  apiPath,
  atTime,
  localId,
  positiveDuration,
  selector,
  signedDuration,
  slowDelay,
} from "./fields.ts";

/**
 * The timed events of a scenario, one schema per action, told apart by `action`. Faults name
 * the patients they hit with a selector (`target`), or a webhook of the scenario by its id;
 * API actions act through an account, as a client platform would.
 */

const target = selector.meta({ description: "Patients the action applies to (a selector)" });
const device = z
  .string()
  .min(1)
  .meta({ description: "A device profile name from the target cohort's kit" });
const webhook = localId.meta({ description: "Id of a webhook of the scenario" });
const account = localId.meta({ description: "Id of an account of the scenario" });

/** One action's object: `at`, the `action` name, and its own fields. */
function action<N extends string, S extends z.ZodRawShape>(name: N, description: string, shape: S) {
  return z
    .strictObject({ at: atTime, action: z.literal(name), ...shape })
    .meta({ title: name, description });
}

export const EVENT_SCHEMAS = [
  action("broker.restart", "Restart the MQTT broker; clients reconnect", {}),
  action("broker.outage", "Stop the MQTT broker for a while", { for: positiveDuration }),
  action("ingestion.restart", "Restart the ingestion consumer; a backlog drains after", {}),
  action("gateway.outage", "The cellular link of the targets' gateways is down", {
    target,
    for: positiveDuration,
  }),
  action("gateway.replace", "New gateway hardware for the targets (a replacement order)", {
    target,
  }),
  action("gateway.unlink", "Unlink the targets' gateways (spec: unlink)", { target }),
  action("cellular.outage", "The modems of the targets' direct-cellular devices lose the network", {
    target,
    for: positiveDuration,
  }),
  action("device.out_of_range", "Devices out of reach of their gateway or network", {
    target,
    for: positiveDuration,
    device: device.optional(),
  }),
  action("device.battery_dead", "Device batteries run flat (until replaced, or for a while)", {
    target,
    device: device.optional(),
    for: positiveDuration.optional(),
  }),
  action("device.clock_drift", "Device clocks jump ahead or behind", {
    target,
    device: device.optional(),
    drift: signedDuration,
  }),
  action("device.duplicate_burst", "Devices send their last `count` readings again, once each", {
    target,
    device: device.optional(),
    count: z.number().int().positive(),
  }),
  action("webhook.down", "The lab's receiver for a webhook refuses connections", {
    webhook,
    for: positiveDuration,
  }),
  action("webhook.slow", "The lab's receiver for a webhook answers after `delay`", {
    webhook,
    delay: slowDelay,
    for: positiveDuration,
  }),
  action("webhook.error", "The lab's receiver for a webhook answers with an HTTP error", {
    webhook,
    status: z.number().int().min(400).max(599),
    for: positiveDuration,
  }),
  action("radio.interference", "BLE packets lost around the targets' gateways (or everywhere)", {
    target: target.optional(),
    loss: z.number().min(0).max(1),
    for: positiveDuration,
  }),
  action("api.create_patient", "Create patients through the HWI API", {
    account,
    count: z.number().int().positive().default(1),
  }),
  action("api.activate_device", "Activate a device of the kit for the targets (HWI API)", {
    target,
    device,
  }),
  action("api.order_device", "Order a device of the kit for the targets (HWI API)", {
    target,
    device,
  }),
  action("api.change_address", "Change the targets' shipping address (HWI API)", {
    target,
    address: z.strictObject({
      street: z.string().min(1),
      city: z.string().min(1),
      state: z.string().regex(/^[A-Z]{2}$/, "a two-letter US state code"),
      zip: z.string().regex(/^\d{5}(-\d{4})?$/, "a US ZIP code, 12345 or 12345-6789"),
    }),
  }),
  action("api.request", "Any HWI/ASR API request, as the account's client", {
    account,
    method: z.enum(["GET", "POST", "PUT", "PATCH", "DELETE"]),
    path: apiPath,
    body: z.unknown().optional(),
    status: z.number().int().min(100).max(599).optional().meta({
      description:
        "The status the answer must have (e.g. 404, to exercise an error path); default any 2xx",
    }),
  }),
] as const;

export const ACTION_NAMES = EVENT_SCHEMAS.map((s) => s.shape.action.value);

export const eventSchema = z.discriminatedUnion("action", EVENT_SCHEMAS, {
  error: (issue) =>
    issue.code === "invalid_union"
      ? `unknown action; expected one of ${ACTION_NAMES.join(", ")}`
      : undefined,
});
export type RawEvent = z.output<typeof eventSchema>;
export type ActionName = RawEvent["action"];
