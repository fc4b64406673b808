import type { WebhookRequest, WebhookResponse, WebhookSender } from "./sender.ts";

/** What the record sender answers: a status code (and body), or a transport error. */
export type RecordedAnswer =
  | {
      readonly statusCode: number;
      readonly body?: string;
      readonly retryAfter?: string;
      readonly date?: string;
    }
  | { readonly error: string };

/**
 * The `record` webhook sender (tests only, DESIGN.md "Boundaries"): keeps every request and
 * answers with `answer` (200 unless told), without a socket.
 */
export class RecordSender implements WebhookSender {
  readonly requests: WebhookRequest[] = [];
  answer: (request: WebhookRequest) => RecordedAnswer = () => ({ statusCode: 200 });

  async send(request: WebhookRequest): Promise<WebhookResponse> {
    this.requests.push(request);
    const answer = this.answer(request);
    if ("error" in answer) {
      return {
        statusCode: null,
        error: answer.error,
        latencyMs: 0,
        snippet: null,
        retryAfter: null,
        date: null,
      };
    }
    return {
      statusCode: answer.statusCode,
      error: null,
      latencyMs: 0,
      snippet: answer.body ?? null,
      retryAfter: answer.retryAfter ?? null,
      date: answer.date ?? null,
    };
  }

  async abort(): Promise<void> {}

  async close(): Promise<void> {}
}
