import { LE_EVT, STATUS } from "../hci/constants.ts";
import * as ev from "../hci/events.ts";
import type { Link, LinkPdu } from "../medium/link.ts";
import { fragmentToHost } from "./acl.ts";
import { Connection } from "./connection.ts";
import { LE_FEATURES } from "./identity.ts";
import type { VirtualController } from "./virtual-controller.ts";

/**
 * The controller's side of LE connections (Vol 6 Part B §4.5, §5.1): connection establishment,
 * data PDUs to the host, termination, connection update, encryption start. The medium calls
 * these through the controller's Station methods; the command table through its own.
 */

/** Connection handles 0x0000–0x0EFF (Vol 4 Part E §5.4.2). */
const MAX_HANDLE = 0x0eff;
/** Connection update takes effect at an instant at least 6 connection events ahead (Vol 6 Part B §5.1.1). */
const UPDATE_INSTANT_EVENTS = 6;
/** Connection Terminated due to MIC Failure (Vol 1 Part F §1.3). */
const STATUS_MIC_FAILURE = 0x3d;

export function allocateHandle(ctl: VirtualController): number {
  for (let i = 0; i <= MAX_HANDLE; i++) {
    const handle = ctl.nextHandle;
    ctl.nextHandle = ctl.nextHandle >= MAX_HANDLE ? 0x0001 : ctl.nextHandle + 1;
    if (!ctl.connections.has(handle)) return handle;
  }
  return -1;
}

export function connectionOf(ctl: VirtualController, link: Link): Connection | undefined {
  for (const conn of ctl.connections.values()) if (conn.link === link) return conn;
  return undefined;
}

export function linkUp(ctl: VirtualController, link: Link): void {
  const central = link.central === ctl;
  const peer = link.peerOf(ctl);
  const handle = allocateHandle(ctl);
  if (handle < 0) {
    ctl.medium.release(link);
    return;
  }
  const conn = new Connection(handle, link, central ? 0 : 1, peer.address, peer.addressType);
  ctl.connections.set(handle, conn);
  ctl.event(
    ev.leConnectionComplete({
      status: STATUS.SUCCESS,
      handle,
      role: conn.role,
      peerAddressType: peer.addressType,
      peerAddress: peer.address,
      interval: link.params.interval,
      latency: link.params.latency,
      supervisionTimeout: link.params.timeout,
      centralClockAccuracy: 0x00,
    }),
  );
}

export function linkReceive(ctl: VirtualController, link: Link, pdu: LinkPdu): void {
  const conn = connectionOf(ctl, link);
  if (conn === undefined) return;
  switch (pdu.kind) {
    case "data": {
      const whole = conn.rx.push(pdu.llid, pdu.bytes);
      if (whole !== undefined)
        for (const p of fragmentToHost(conn.handle, whole, ctl.hostAclLength)) ctl.toHost(p);
      return;
    }
    case "terminate":
      closeConnection(ctl, conn, pdu.reason);
      return;
    case "enc_req":
      conn.pendingEncryption = { random: pdu.random, ediv: pdu.ediv, key: pdu.key };
      if (((ctl.leEventMask >> BigInt(LE_EVT.LONG_TERM_KEY_REQUEST - 1)) & 1n) === 0n) {
        rejectEncryption(ctl, conn);
        return;
      }
      ctl.event(ev.leLongTermKeyRequest(conn.handle, pdu.random, pdu.ediv));
      return;
    case "enc_rsp":
      conn.encrypted = true;
      ctl.event(ev.encryptionChange(STATUS.SUCCESS, conn.handle, true));
      return;
    case "enc_reject":
      ctl.event(ev.encryptionChange(pdu.error, conn.handle, false));
      return;
    case "mic_failure":
      return;
    case "conn_update":
      applyUpdate(ctl, conn, pdu.params);
      return;
    case "feature_req":
      link.send(ctl, { kind: "feature_rsp", features: LE_FEATURES });
      return;
    case "feature_rsp":
      ctl.event(ev.leReadRemoteFeaturesComplete(STATUS.SUCCESS, conn.handle, pdu.features));
      return;
  }
}

export function linkDown(ctl: VirtualController, link: Link, reason: number): void {
  const conn = connectionOf(ctl, link);
  if (conn !== undefined)
    closeConnection(ctl, conn, conn.terminating ? STATUS.LOCAL_HOST_TERMINATED : reason);
}

/** Forgets the connection; the host's unacknowledged packets count as flushed (§7.7.5). */
export function closeConnection(ctl: VirtualController, conn: Connection, reason: number): void {
  if (ctl.connections.get(conn.handle) !== conn) return;
  ctl.connections.delete(conn.handle);
  ctl.freeBuffers += conn.inFlight;
  conn.inFlight = 0;
  ctl.event(ev.disconnectionComplete(STATUS.SUCCESS, conn.handle, reason));
}

/** Host Disconnect: LL_TERMINATE_IND, then Disconnection Complete on both sides (Vol 6 Part B §5.1.3). */
export function terminate(ctl: VirtualController, conn: Connection, reason: number): void {
  conn.terminating = true;
  conn.link.send(ctl, { kind: "terminate", reason }, () => {
    closeConnection(ctl, conn, STATUS.LOCAL_HOST_TERMINATED);
    ctl.medium.release(conn.link);
  });
}

/** LE Connection Update: both hosts hear of it at the instant (Vol 6 Part B §5.1.1). */
export function requestUpdate(
  ctl: VirtualController,
  conn: Connection,
  params: Link["params"],
): void {
  conn.link.send(ctl, { kind: "conn_update", params });
  applyUpdate(ctl, conn, params);
}

export function applyUpdate(
  ctl: VirtualController,
  conn: Connection,
  params: Link["params"],
): void {
  const delay = UPDATE_INSTANT_EVENTS * conn.link.intervalMs();
  ctl.clock.setTimeout(() => {
    if (ctl.connections.get(conn.handle) !== conn) return;
    conn.link.params = params;
    ctl.event(
      ev.leConnectionUpdateComplete(
        STATUS.SUCCESS,
        conn.handle,
        params.interval,
        params.latency,
        params.timeout,
      ),
    );
  }, delay);
}

/** Peripheral host's LTK: equal keys encrypt; unequal ones fail the MIC check (Vol 6 Part B §5.1.3.1). */
export function answerEncryption(ctl: VirtualController, conn: Connection, key: Buffer): void {
  const pending = conn.pendingEncryption;
  conn.pendingEncryption = undefined;
  if (pending === undefined) return;
  if (pending.key.equals(key)) {
    conn.encrypted = true;
    conn.link.send(ctl, { kind: "enc_rsp", ok: true });
    ctl.event(ev.encryptionChange(STATUS.SUCCESS, conn.handle, true));
  } else {
    // Each side derives a different session key: the first encrypted PDU fails its MIC.
    ctl.medium.dropLink(conn.link, STATUS_MIC_FAILURE);
  }
}

/** No key: LL_REJECT_EXT_IND with PIN or Key Missing (Vol 6 Part B §5.1.3.1). */
export function rejectEncryption(ctl: VirtualController, conn: Connection): void {
  conn.pendingEncryption = undefined;
  conn.link.send(ctl, { kind: "enc_reject", error: STATUS.PIN_OR_KEY_MISSING });
}
