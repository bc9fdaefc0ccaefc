/**
 * How one seal of the answer reaches WeCom. The part past one bubble (4,608 code points here, so
 * never past 20,480 bytes) keeps its head sealed in the bubble the user watched and sends the rest
 * as confirmed pushes, in order, only once the sealing frame's verdict is in: a refused head is
 * pushed once (or posted to the response_url), and when the head reached nobody the tail is
 * withheld (a tail without its head is a fragment nobody can place). A push nobody acknowledged is
 * sent again by the client (after a reconnect), so only a part WeCom refused (or never confirmed,
 * after the re-sends) is missing: it is said in the chat where it belongs ("part 2 of 3 did not
 * arrive: …"), and the rest follows. Pushes wait for WeCom's budget rather than be refused; when
 * that wait is long, the head says so.
 */
import type { Logger } from "../messaging/base/logger.js";
import type { AuditSink } from "../messaging/security/audit.js";
import type { BubbleStream } from "./bubbles.js";
import type { FrameVerdict } from "./client.js";
import { composeFrame } from "./frame.js";
import { WECOM_LONG_BUDGET_WAIT_MS, WECOM_PUSHES_PER_HOUR, WECOM_PUSHES_PER_MINUTE } from "./limits.js";
import type { Outbox } from "./outbox.js";

/** What the user reads where a part of the answer should have been. */
export function missingPartNotice(part: number, of: number, verdict: FrameVerdict): string {
  const why =
    verdict.kind === "refused"
      ? `WeCom refused it (error ${verdict.errcode})`
      : verdict.kind === "unacked"
        ? "WeCom never confirmed it, even after it was sent again"
        : "the connection to WeCom was down";
  return `⚠️ Part ${part} of ${of} did not arrive: ${why}.`;
}

/** Under the head when the rest must wait for WeCom's budget: the answer is not over, it is paced. */
export function budgetWaitNotice(parts: number, waitMs: number): string {
  const minutes = Math.max(1, Math.ceil(waitMs / 60_000));
  return `⏳ The rest of this answer (${parts} more message${parts === 1 ? "" : "s"}) arrives over about ${minutes} min: WeCom lets a bot send ${WECOM_PUSHES_PER_MINUTE} messages a minute and ${WECOM_PUSHES_PER_HOUR} an hour.`;
}

/** A body and the line under it, as every WeCom frame joins them (frame.ts). */
export function joinLine(body: string, line: string): string {
  return line ? (body.trim() ? `${body}\n\n${line}` : line) : body;
}

export interface SealOptions {
  stream: BubbleStream;
  outbox: Outbox;
  logger: Logger;
  audit?: AuditSink | undefined;
  present: (slice: string) => string;
}

export class WeComSeal {
  /** The pieces as the kit delivers them (the head with the budget's notice under it). */
  readonly pieces: string[];
  private next = 0;
  /** Nothing more of this seal is sent: a hole nobody was told about would come before it. */
  private withheld = false;

  constructor(
    private readonly o: SealOptions,
    pieces: readonly string[],
    /** The end's status line the kit joins under the last piece. */
    private readonly footer: string,
  ) {
    this.pieces = [...pieces];
    const [head, ...tail] = this.pieces;
    if (head === undefined || tail.length === 0) return;
    // The pushes still to come (the head too, when no bubble can carry it) against WeCom's budget.
    const wait = o.outbox.pushDelay(o.stream.usable ? tail.length : this.pieces.length);
    if (wait > WECOM_LONG_BUDGET_WAIT_MS)
      this.pieces[0] = joinLine(head, `_${budgetWaitNotice(tail.length, wait)}_`);
  }

  /** One delivered body (the footer joined under the last): the head, or a later part; whether it landed. */
  async deliver(body: string): Promise<boolean> {
    const at = this.find(body);
    return at > 0 ? this.part(at, body) : this.head(body);
  }

  /** The piece `body` is, at or after the last one delivered; -1 when it is none of them. */
  private find(body: string): number {
    for (let i = this.next; i < this.pieces.length; i++) {
      const piece = this.pieces[i] as string;
      if (body === piece || body === joinLine(piece, this.footer)) {
        this.next = i + 1;
        return i;
      }
    }
    return -1;
  }

  /** The bubble the user watched, else ONE confirmed push, else the response_url. */
  private async head(body: string): Promise<boolean> {
    if (await this.o.stream.sealHead(body)) return true;
    const push = composeFrame({ body });
    if ((await this.o.outbox.push(push)) || (await this.o.outbox.lastResort(push))) return true;
    this.withheld = true;
    this.o.logger.error("wecom: the answer's head reached nobody; its tail is withheld", {
      parts: this.pieces.length,
    });
    this.o.audit?.log("delivery", "failed", {
      channel: "wecom",
      reason: "head_undelivered",
      parts: this.pieces.length,
    });
    return false;
  }

  private async part(index: number, body: string): Promise<boolean> {
    if (this.withheld) return false;
    const outcome = await this.o.outbox.pushed(composeFrame({ body }));
    if (outcome.landed) return true;
    const part = index + 1;
    const of = this.pieces.length;
    this.o.logger.error("wecom: a part of the answer did not arrive; saying so in the chat", {
      part,
      of,
      verdict: outcome.verdict.kind,
    });
    this.o.audit?.log("delivery", "failed", {
      channel: "wecom",
      reason: outcome.verdict.kind === "refused" ? "part_refused" : "part_unconfirmed",
      part,
      parts: of,
    });
    // Said where the part belongs, so the rest that follows has a named hole, not a silent one.
    const notice = this.o.present(missingPartNotice(part, of, outcome.verdict));
    const last = index === of - 1 ? this.footer : "";
    if (await this.o.outbox.say(composeFrame({ body: notice, footer: last }))) return false;
    // Not even the notice got through: more parts would land after a hole nobody was told about.
    this.withheld = true;
    this.o.logger.error("wecom: neither a part nor its notice arrived; the rest is withheld", { part, of });
    return false;
  }
}
