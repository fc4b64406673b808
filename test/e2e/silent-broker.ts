import { once } from "node:events";
import { type AddressInfo, createServer, type Socket } from "node:net";

/**
 * A "broker" that takes the TCP connection and reads the CONNECT, and never sends a CONNACK:
 * a client is left waiting on MQTT.js's connect timeout (10 s). `connecting` resolves on the
 * first CONNECT; close() ends the connections and the server.
 */
export async function silentBroker(): Promise<{
  readonly url: string;
  readonly connecting: Promise<void>;
  close(): Promise<void>;
}> {
  const sockets = new Set<Socket>();
  let connected: () => void = () => {};
  const connecting = new Promise<void>((resolve) => {
    connected = resolve;
  });
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.once("data", () => connected());
    socket.on("error", () => {});
    socket.on("close", () => sockets.delete(socket));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `mqtt://127.0.0.1:${port}`,
    connecting,
    async close() {
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, "close");
    },
  };
}
