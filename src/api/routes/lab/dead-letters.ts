import {
  deadLetterDetail,
  deadLetterDetailJson,
  deadLetterFilter,
  deadLetterJson,
  deleteDeadLetter,
  deleteDeadLetters,
  listDeadLetters,
  replayDeadLetter,
  replayJson,
} from "../../../app/dead-letters.ts";
import { orNotFound } from "../../errors.ts";
import { DETAIL_SCHEMA, describe, FIELD_ERRORS_SCHEMA } from "../../json-schema.ts";
import { listMode, paginate, sendList } from "../../pagination.ts";
import {
  DEAD_LETTER_DETAIL_JSON,
  DEAD_LETTER_LISTS,
  DELETED_JSON,
  DeadLetterDeleteQuery,
  DeadLetterParams,
  DeadLetterQuery,
  REPLAY_JSON,
} from "../../schemas/dead-letter.ts";
import type { RoutePlugin } from "../../types.ts";

const TAGS = ["lab"];
const SECURITY = [{ AdminToken: [] }];
const AUTH = { 401: DETAIL_SCHEMA, 403: DETAIL_SCHEMA };
const DETAIL = describe(DEAD_LETTER_DETAIL_JSON, "The dead letter with its payload.");
const NOT_FOUND = describe(DETAIL_SCHEMA, "No dead letter has that id.");
const INVALID = describe(FIELD_ERRORS_SCHEMA, "Keyed by field, saying why.");
const notFound = (id: string) => `No dead letter has id "${id}".`;

/**
 * /lab/v1/dead-letters/ (README "Dead letters"): the MQTT messages ingestion could not use,
 * kept byte for byte with the reason, for the platform team or hardware engineer whose payload
 * it was; delete one, or run it through ingestion again once its cause is fixed.
 */
export const labDeadLettersRoutes: RoutePlugin = async (app, ctx) => {
  const { store } = ctx;

  app.get(
    "/dead-letters/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "List dead letters",
        description:
          "Newest first, as the webhook delivery log: what failed last is what someone debugging a payload looks for. A flat array of at most 1000 without page, the envelope with page. Each names its topic, message id, reason and receipt time; GET one for its payload. Dead letters are kept until deleted or replayed, or for 30 days of the lab's clock (deleted hourly after that).",
        querystring: DeadLetterQuery,
        response: { 200: DEAD_LETTER_LISTS.either, 400: INVALID, 404: DETAIL_SCHEMA, ...AUTH },
      },
    },
    async (request, reply) => {
      const filter = deadLetterFilter(request.query);
      const body = await paginate(
        request,
        listMode(request.query),
        (page) => listDeadLetters(store, filter, page),
        deadLetterJson,
        ctx.config.baseUrl,
      );
      return sendList(reply, body, DEAD_LETTER_LISTS);
    },
  );

  app.delete(
    "/dead-letters/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "Delete dead letters in bulk",
        description:
          "Every dead letter the filters match (those of GET), or every one with all=true; without either, a 400 keyed all. 200 with how many were deleted (0 when none matched). Dead letters older than 30 days of the lab's clock are deleted hourly anyway.",
        querystring: DeadLetterDeleteQuery,
        response: { 200: DELETED_JSON, 400: INVALID, ...AUTH },
      },
    },
    async (request) => ({ deleted: await deleteDeadLetters(store, request.query) }),
  );

  app.get(
    "/dead-letters/:id/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "Get a dead letter",
        description:
          "With its payload as text when it is valid UTF-8 (payload_text, else null) and always as base64 (payload_base64).",
        params: DeadLetterParams,
        response: { 200: DETAIL, 404: NOT_FOUND, ...AUTH },
      },
    },
    async (request) => {
      const { id } = request.params;
      return deadLetterDetailJson(await orNotFound(deadLetterDetail(store, id), notFound(id)));
    },
  );

  app.delete(
    "/dead-letters/:id/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "Delete a dead letter",
        params: DeadLetterParams,
        response: { 204: { type: "null", description: "Deleted." }, 404: NOT_FOUND, ...AUTH },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      await orNotFound(deleteDeadLetter(store, id), notFound(id));
      return reply.code(204).send();
    },
  );

  app.post(
    "/dead-letters/:id/replay/",
    {
      schema: {
        tags: TAGS,
        security: SECURITY,
        summary: "Run a dead letter through ingestion again",
        description:
          "After its cause is fixed (e.g. the device its readings name is activated now): the same topic and payload go through the running lab's ingestion, received now. The dead letter is removed in the same transaction whatever happens. Readings that now resolve are stored, with their webhooks; a message that fails again is kept as a new dead letter (new id, received now) with the new reason, returned in dead_letter — the old row is replaced, not kept, so each failing message has one dead letter saying why it failed last. Ingestion stays idempotent: a message whose id was already ingested stores nothing (already_ingested), and re-sent readings are duplicates.",
        params: DeadLetterParams,
        response: { 200: REPLAY_JSON, 404: NOT_FOUND, ...AUTH },
      },
    },
    async (request) => {
      const { id } = request.params;
      return replayJson(await orNotFound(replayDeadLetter(store, ctx.replay, id), notFound(id)));
    },
  );
};
