import type { AsrSettingsRepo, GlucometerSuppliesRepo, SupplyRequestsRepo } from "./store-asr.ts";
import type { WebhookDeliveriesRepo, WebhookOutboxRepo, WebhooksRepo } from "./store-webhooks.ts";
import type {
  AccountRow,
  ApiKeyRow,
  CreatedApiKey,
  DeviceFilter,
  DevicePatch,
  DevicePropertyRow,
  DeviceRow,
  DeviceWithPatient,
  HardwareChange,
  HardwareLogReason,
  HardwareLogRow,
  ListOptions,
  ListResult,
  Ms,
  NewAccount,
  NewDevice,
  NewPatient,
  PatientPatch,
  PatientRow,
  VerifiedApiKey,
} from "./types.ts";
import type {
  GatewayFilter,
  GatewayRow,
  GatewayStatus,
  HeldWhitelistEntry,
  IssuedMqttCredential,
  MqttCredentialRow,
  MqttRole,
  NewReplacement,
  ReplacementPatch,
  ReplacementRow,
  WhitelistEntry,
  WhitelistRow,
} from "./types-hardware.ts";
import type {
  DeadLetterFilter,
  DeadLetterRow,
  InsertManyResult,
  MeasurementQuery,
  MeasurementRecord,
  MeasurementRow,
  NewDeadLetter,
  NewMeasurement,
  OrphanMatch,
  OrphanOwner,
} from "./types-ingest.ts";
import type {
  BillingBasis,
  BillingPeriodRow,
  NewShipment,
  NewShipmentEvent,
  ShipmentEventRow,
  ShipmentFilter,
  ShipmentPatch,
  ShipmentRow,
} from "./types-shipments.ts";

/**
 * The storage boundary (DESIGN.md "Boundaries"): small repositories, every method async. Unique
 * keys raise E_STORE_CONFLICT, references to missing rows E_STORE_NOT_FOUND, schema rules
 * E_STORE_INVALID, an unreachable database E_STORE_UNAVAILABLE. Getters return null rather than
 * throw. Everything account-scoped takes the account id first, so no query can leak across
 * accounts.
 */
export interface AccountsRepo {
  /** Conflict when the client domain exists (case-insensitively). */
  create(input: NewAccount): Promise<AccountRow>;
  get(id: string): Promise<AccountRow | null>;
  /** Spec 5.3: the CLIENT_DOMAIN of the path; case-insensitive. */
  getByClientDomain(clientDomain: string): Promise<AccountRow | null>;
  list(): Promise<AccountRow[]>;
  update(
    id: string,
    patch: { asrEnabled?: boolean; omitStatusMetrics?: boolean },
  ): Promise<AccountRow>;
}

export interface ApiKeysRepo {
  /** The plain key is in the result only; the store keeps its SHA-256 and a display prefix. */
  create(accountId: string, input?: { name?: string | null }): Promise<CreatedApiKey>;
  list(accountId: string): Promise<ApiKeyRow[]>;
  /** Null for unknown, malformed or revoked keys. */
  verify(key: string): Promise<VerifiedApiKey | null>;
  /** False when no such live key. */
  revoke(accountId: string, keyId: string): Promise<boolean>;
}

export interface PatientsRepo {
  /** Spec 4.1 / 7.3: conflict when the external_id exists, ignoring case. */
  create(accountId: string, input: NewPatient): Promise<PatientRow>;
  /** Spec 2.1: implicit creation on device activation; returns the existing record if any. */
  ensure(accountId: string, externalId: string): Promise<{ patient: PatientRow; created: boolean }>;
  /** Case-insensitive (spec 2.1). */
  get(accountId: string, externalId: string): Promise<PatientRow | null>;
  getById(accountId: string, id: number): Promise<PatientRow | null>;
  list(accountId: string, page?: ListOptions): Promise<ListResult<PatientRow>>;
  /** PUT: every field not given returns to its default. */
  replace(accountId: string, externalId: string, input: NewPatient): Promise<PatientRow>;
  /** PATCH: only the fields given. */
  update(accountId: string, externalId: string, patch: PatientPatch): Promise<PatientRow>;
  /** Spec 4.1: linked devices stay, with no patient. False when absent. */
  delete(accountId: string, externalId: string): Promise<boolean>;
}

export interface DevicesRepo {
  /**
   * Conflict when another device holds the same gateway slot: one device per sensor code per
   * gateway, unless their sensor ids differ (spec 2.8). Logs the activation's hardware_uuid.
   */
  create(accountId: string, input: NewDevice): Promise<DeviceRow>;
  get(accountId: string, id: string): Promise<DeviceWithPatient | null>;
  list(
    accountId: string,
    filter?: DeviceFilter,
    page?: ListOptions,
  ): Promise<ListResult<DeviceWithPatient>>;
  /** Logs a hardware_uuid change, with reason "update" unless told. */
  update(
    accountId: string,
    id: string,
    patch: DevicePatch,
    opts?: { reason?: HardwareLogReason },
  ): Promise<DeviceRow>;
  delete(accountId: string, id: string): Promise<boolean>;
  /** For ingestion: the device in a gateway slot (or on an IMEI), any account. */
  findByHardware(match: OrphanMatch): Promise<DeviceRow | null>;
  /**
   * For ingestion (one query per batch) and gateway adoption: every device on these gateways or IMEIs (matched
   * case-insensitively), any account, with its patient; ordered by created, id. With `status`,
   * only the devices in that status (adoption's: those waiting for their gateway).
   */
  findAllByHardware(
    hardwareUuids: readonly string[],
    status?: string,
  ): Promise<DeviceWithPatient[]>;
  /** For ingestion: these devices, any account, with their patients (absent ids left out). */
  getManyById(ids: readonly string[]): Promise<DeviceWithPatient[]>;
  /** Spec 3 unlink: hardware_uuid of every device of the gateway becomes null, logged. */
  unlinkGateway(
    accountId: string,
    gatewayUuid: string,
    opts?: { status?: string },
  ): Promise<HardwareChange[]>;
  unlinkDevice(
    accountId: string,
    id: string,
    opts?: { status?: string },
  ): Promise<HardwareChange | null>;
  /** Spec 4.3: a replacement gateway updates hardware_uuid on all devices of the old one. */
  replaceHardware(
    accountId: string,
    fromUuid: string,
    toUuid: string,
    opts?: { status?: string },
  ): Promise<HardwareChange[]>;
}

export interface DevicePropertiesRepo {
  list(deviceId: string): Promise<DevicePropertyRow[]>;
  /** Upsert by key. Not found when the device does not exist. */
  set(deviceId: string, key: string, value: string): Promise<DevicePropertyRow>;
  delete(deviceId: string, key: string): Promise<boolean>;
}

export interface GatewaysRepo {
  /** Any account; case-insensitive. */
  get(gatewayUuid: string): Promise<GatewayRow | null>;
  /** The known gateways among these, any account; case-insensitive; unknown ones left out. */
  getMany(gatewayUuids: readonly string[]): Promise<GatewayRow[]>;
  /** Spec 4.2 gateway-info: null unless associated with this account. */
  getForAccount(accountId: string, gatewayUuid: string): Promise<GatewayRow | null>;
  /** Creates the gateway if unknown. Conflict when it belongs to another account. */
  associate(accountId: string, gatewayUuid: string, assignedOn?: number): Promise<GatewayRow>;
  /** Status reports create unknown gateways (not yet associated with an account). */
  updateStatus(gatewayUuid: string, status: GatewayStatus): Promise<GatewayRow>;
  /** Keeps the latest of the stored and the given time. */
  recordMeasurement(gatewayUuid: string, at: number): Promise<void>;
  /** recordMeasurement for many gateways at once (unknown ones are created, unassociated). */
  recordMeasurements(latest: ReadonlyMap<string, number>): Promise<void>;
  setShipped(gatewayUuid: string, shippedOn: number | null): Promise<GatewayRow>;
  list(
    accountId: string,
    filter?: GatewayFilter,
    page?: ListOptions,
  ): Promise<ListResult<GatewayRow>>;
}

export interface WhitelistRepo {
  /** Not found when the gateway is unknown. */
  upsert(gatewayUuid: string, entry: WhitelistEntry): Promise<WhitelistRow>;
  list(gatewayUuid: string): Promise<WhitelistRow[]>;
  remove(gatewayUuid: string, macAddress: string): Promise<boolean>;
  /**
   * Spec 2.3: each gateway reported the devices it holds (MAC address in any case, sensor
   * code): the entries it holds as listed become CO, the others RE. Per report, in order (an
   * ingested batch's check-ins: one read for all): the whole whitelist as it now is (a check-in
   * compares it with what the gateway holds) and the entries whose status changed; both [] for
   * an unknown gateway.
   */
  reconcile(
    reports: readonly { gatewayUuid: string; held: readonly HeldWhitelistEntry[] }[],
  ): Promise<{ whitelist: WhitelistRow[]; changed: WhitelistRow[] }[]>;
}

export interface MeasurementsRepo {
  /** Idempotent: records whose dedupe key is already stored are skipped and reported. */
  insertMany(rows: readonly NewMeasurement[]): Promise<InsertManyResult>;
  get(id: number): Promise<MeasurementRow | null>;
  /** Every record of the account (the dashboard's total); index-only on account_id. */
  count(accountId: string): Promise<number>;
  query(q: MeasurementQuery): Promise<ListResult<MeasurementRow>>;
  /** The same query, reading only what a measurement GET renders (the API's hot path). */
  records(q: MeasurementQuery): Promise<ListResult<MeasurementRecord>>;
  /** Readings kept before their device was activated. */
  listOrphans(match: OrphanMatch): Promise<MeasurementRow[]>;
  /** Gives orphan readings their account, device and patient; returns them. */
  attachOrphans(match: OrphanMatch, owner: OrphanOwner): Promise<MeasurementRow[]>;
}

export interface IngestedMessagesRepo {
  /** True the first time a message id is seen: broker redelivery must store nothing twice. */
  claim(messageId: string, received?: number): Promise<boolean>;
  /** claim for many ids at once: the ids seen for the first time (each id once). */
  claimMany(messageIds: readonly string[], received?: number): Promise<Set<string>>;
  has(messageId: string): Promise<boolean>;
  /** Forgets the claims received before `before`; how many. */
  prune(before: number): Promise<number>;
}

export interface DeadLettersRepo {
  /** A U+0000 in topic or reason (PostgreSQL text cannot hold one) is kept as `\u0000`. */
  add(input: NewDeadLetter): Promise<DeadLetterRow>;
  get(id: number): Promise<DeadLetterRow | null>;
  /** Oldest first unless `filter.newestFirst`. */
  list(filter?: DeadLetterFilter, page?: ListOptions): Promise<ListResult<DeadLetterRow>>;
  delete(id: number): Promise<boolean>;
  /** Every dead letter `filter` matches (its order ignored); how many there were. */
  deleteMany(filter: DeadLetterFilter): Promise<number>;
}

export interface HardwareLogsRepo {
  add(
    accountId: string,
    entry: {
      deviceId: string;
      previousHardwareUuid: string | null;
      hardwareUuid: string | null;
      reason: HardwareLogReason;
    },
  ): Promise<HardwareLogRow>;
  list(
    accountId: string,
    filter?: {
      deviceId?: string;
      /** Entries that took a device off this hardware (any case). */
      previousHardwareUuid?: string;
      reason?: HardwareLogReason;
    },
    page?: ListOptions,
  ): Promise<ListResult<HardwareLogRow>>;
  /**
   * For ingestion (one query per batch): the entries that took a device off one of these
   * gateways or IMEIs (any case, any account) after `since`, oldest first.
   */
  departures(hardwareUuids: readonly string[], since: Ms): Promise<HardwareLogRow[]>;
  /**
   * For ingestion: the entries that moved a device off one of these gateways or IMEIs to a
   * replacement (reason "replacement"; any case, any account, any time), oldest first.
   */
  replacedFrom(hardwareUuids: readonly string[]): Promise<HardwareLogRow[]>;
}

export interface ReplacementsRepo {
  create(accountId: string, input: NewReplacement): Promise<ReplacementRow>;
  get(accountId: string, id: string): Promise<ReplacementRow | null>;
  list(
    accountId: string,
    filter?: { deviceId?: string },
    page?: ListOptions,
  ): Promise<ListResult<ReplacementRow>>;
  update(accountId: string, id: string, patch: ReplacementPatch): Promise<ReplacementRow>;
  /** Spec 3 Cancelled: a pending order is removed. False when absent. */
  delete(accountId: string, id: string): Promise<boolean>;
}

/** Issue 4: broker credentials per gateway, per IMEI and per lab service; passwords hashed. */
export interface MqttCredentialsRepo {
  /** Creates the credential, or rotates its password (and role) when the username exists. */
  issue(username: string, role: MqttRole): Promise<IssuedMqttCredential>;
  get(username: string): Promise<MqttCredentialRow | null>;
  /** Null for an unknown username or a wrong password (constant-time comparison). */
  verify(username: string, password: string): Promise<MqttCredentialRow | null>;
  /** False when no such credential. */
  revoke(username: string): Promise<boolean>;
}

/**
 * Issue 4 §2: shipments of the fulfilment simulator, each with its scheduled next transition.
 * Ids are the orders' own (hwi_device_id, replacement id), unique across accounts.
 */
export interface ShipmentsRepo {
  /** Not found when the device (or replacement) does not exist; conflict when the id exists. */
  create(accountId: string, input: NewShipment): Promise<ShipmentRow>;
  get(id: string): Promise<ShipmentRow | null>;
  /** Oldest first. */
  list(filter?: ShipmentFilter, page?: ListOptions): Promise<ListResult<ShipmentRow>>;
  /**
   * With `expectStep`, changes it only while its step is still that one, else E_STORE_CONFLICT:
   * a timer and an admin action can never both apply a transition.
   */
  update(id: string, patch: ShipmentPatch, opts?: { expectStep?: number }): Promise<ShipmentRow>;
  /** Shipments with a next transition due at or before `until` (every one without), by due time. */
  due(until?: Ms, limit?: number): Promise<ShipmentRow[]>;
  /** Shipped (Dropshipped) in [from, to), any or one account. */
  shippedBetween(from: Ms, to: Ms, accountId?: string): Promise<ShipmentRow[]>;
  addEvent(shipmentId: string, event: NewShipmentEvent): Promise<ShipmentEventRow>;
  /** In the order they happened. */
  events(shipmentId: string): Promise<ShipmentEventRow[]>;
}

/** Billable periods of devices: from activation or delivery until unlink (README "Billing"). */
export interface BillingPeriodsRepo {
  /** Opens a period, or returns the one already open for the device. */
  open(accountId: string, deviceId: string, at: Ms, basis: BillingBasis): Promise<BillingPeriodRow>;
  /** Ends the open periods of these devices; how many were open. */
  close(accountId: string, deviceIds: readonly string[], at: Ms): Promise<number>;
  /** Periods overlapping [from, to) (either bound optional); by account, start, id. */
  list(filter: {
    accountId?: string;
    deviceId?: string;
    from?: Ms;
    to?: Ms;
  }): Promise<BillingPeriodRow[]>;
}

export interface StoreRepositories {
  readonly accounts: AccountsRepo;
  readonly apiKeys: ApiKeysRepo;
  readonly patients: PatientsRepo;
  readonly devices: DevicesRepo;
  readonly deviceProperties: DevicePropertiesRepo;
  readonly gateways: GatewaysRepo;
  readonly whitelist: WhitelistRepo;
  readonly measurements: MeasurementsRepo;
  readonly ingestedMessages: IngestedMessagesRepo;
  readonly webhooks: WebhooksRepo;
  readonly deadLetters: DeadLettersRepo;
  readonly hardwareLogs: HardwareLogsRepo;
  readonly replacements: ReplacementsRepo;
  readonly mqttCredentials: MqttCredentialsRepo;
  readonly shipments: ShipmentsRepo;
  readonly billingPeriods: BillingPeriodsRepo;
  readonly webhookOutbox: WebhookOutboxRepo;
  readonly webhookDeliveries: WebhookDeliveriesRepo;
  readonly supplyRequests: SupplyRequestsRepo;
  readonly glucometerSupplies: GlucometerSuppliesRepo;
  readonly asrSettings: AsrSettingsRepo;
}

export interface Store extends StoreRepositories {
  readonly kind: "sqlite" | "postgres";
  /** Applies pending migrations; returns their names (none when up to date). Idempotent. */
  migrate(): Promise<string[]>;
  /**
   * Runs `fn` in one transaction: committed when it resolves, rolled back when it throws. Use
   * only the `tx` repositories inside: on SQLite the outer store waits for the transaction's
   * single connection, so calling it from inside would deadlock.
   */
  transaction<T>(fn: (tx: StoreRepositories) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}
