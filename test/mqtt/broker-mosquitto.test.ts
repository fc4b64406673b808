import { ExternalBroker } from "../../src/mqtt/broker.ts";
import { mosquittoOrSkip } from "../support/mosquitto.ts";
import { brokerContract } from "./broker-contract.ts";

/** DESIGN.md "Testing": the broker contract on a real Mosquitto too. */
const url = await mosquittoOrSkip("Broker contract: Mosquitto");
if (url !== undefined) {
  brokerContract(`Mosquitto (${url})`, { open: async () => new ExternalBroker(url) });
}
