/**
 * Presses that land on a gateway other than the one serving their conversation (several gateways on
 * one store, docs/scale-out.md). A webhook, or a Slack Socket Mode event, reaches whichever gateway
 * the platform or the load balancer picks, but an open approval prompt and a posted model list live
 * in the memory of the gateway running the conversation's turns. Such a press is forwarded there as
 * plain data and judged by the same rules as a local one (the nonce, the list's owner and scope);
 * the outcome comes back for the presser. Nothing is decided on the receiving side: a press that
 * gets no answer approves nothing. Layer: messaging/channel.
 */
import { z } from "zod";
import type { Logger } from "../base/logger.js";
import type { ConversationOwnership } from "../store/ownership.js";
import type { JsonValue } from "../store/port.js";

/** What the presser is told when the serving gateway did not answer in time (it may be dying). */
export const PRESS_UNCONFIRMED =
  "That press could not be confirmed (the gateway running this conversation did not answer); press again in a moment.";

const approvalPress = z.object({
  kind: z.literal("approval"),
  address: z.json(),
  requestId: z.string().max(512),
  nonce: z.string().max(512).nullable(),
  verdict: z.enum(["approve", "approve_always", "deny"]),
  label: z.string().max(2000).optional(),
});

const modelPress = z.object({
  kind: z.literal("model"),
  address: z.json(),
  handle: z.string().max(512),
  index: z.number().int().nonnegative(),
  presser: z.string().max(512),
});

/** A press on a list the channel itself keeps (Teams' session list): its data is the channel's. */
const listPress = z.object({
  kind: z.literal("list"),
  address: z.json(),
  list: z.string().max(64),
  data: z.json(),
});

/** Strict: a request another gateway wrote is still input, and a malformed one is refused whole. */
const forwardedPress = z.discriminatedUnion("kind", [approvalPress, modelPress, listPress]);

export type ForwardedPress = z.infer<typeof forwardedPress>;
export type ForwardedApproval = z.infer<typeof approvalPress>;
export type ForwardedModelPick = z.infer<typeof modelPress>;
export type ForwardedListPress = z.infer<typeof listPress>;

const approvalOutcome = z.union([
  z.object({ ok: z.literal(true), label: z.string() }),
  z.object({ ok: z.literal(false), text: z.string() }),
]);
/**
 * A press's outcome. `unconfirmed`: nobody judged it (the serving gateway did not answer), so the
 * prompt may still be open there: keep its buttons, the user may press again.
 */
export type ApprovalOutcome =
  | z.infer<typeof approvalOutcome>
  | { ok: false; text: string; unconfirmed: true };

const UNCONFIRMED: ApprovalOutcome = { ok: false, text: PRESS_UNCONFIRMED, unconfirmed: true };

const modelOutcome = z.union([z.object({ refusal: z.string() }), z.object({ applied: z.literal(true) })]);
export type ForwardedModelOutcome = z.infer<typeof modelOutcome>;

/** What the presser is told (null: the list itself shows the outcome). */
const listOutcome = z.object({ text: z.string().nullable() });
export type ForwardedListOutcome = z.infer<typeof listOutcome>;

/** How the serving gateway judges each kind of forwarded press (the hub's own press paths). */
export interface ForwardedPressJudge {
  approval(press: ForwardedApproval): Promise<ApprovalOutcome>;
  model(press: ForwardedModelPick): Promise<ForwardedModelOutcome>;
  list(press: ForwardedListPress): Promise<ForwardedListOutcome>;
}

export class PressForwarding {
  constructor(private readonly o: { channel: string; ownership: ConversationOwnership; logger: Logger }) {}

  /**
   * An approval press whose prompt is not open here: the serving gateway's outcome, or undefined
   * when this gateway serves the conversation (or none does) and so judges it itself.
   */
  approval(
    conversationKey: string,
    press: Omit<ForwardedApproval, "kind">,
  ): Promise<ApprovalOutcome | undefined> {
    return this.judged(conversationKey, { kind: "approval", ...press }, approvalOutcome, UNCONFIRMED);
  }

  /** A press on a model list this gateway did not post: as `approval`. */
  model(
    conversationKey: string,
    press: Omit<ForwardedModelPick, "kind">,
  ): Promise<ForwardedModelOutcome | undefined> {
    return this.judged(conversationKey, { kind: "model", ...press }, modelOutcome, {
      refusal: PRESS_UNCONFIRMED,
    });
  }

  /** A press on a channel-kept list this gateway did not post: as `approval`. */
  list(
    conversationKey: string,
    press: Omit<ForwardedListPress, "kind">,
  ): Promise<ForwardedListOutcome | undefined> {
    return this.judged(conversationKey, { kind: "list", ...press }, listOutcome, { text: PRESS_UNCONFIRMED });
  }

  /** Judge the presses other gateways forward here, until the returned function is called. */
  serve(judge: ForwardedPressJudge): () => void {
    return this.o.ownership.onForwarded(this.o.channel, async (request) => {
      const parsed = forwardedPress.safeParse(request);
      if (!parsed.success) {
        this.o.logger.warn(`${this.o.channel}: a forwarded press was malformed; refused`, {
          problem: parsed.error.issues[0]?.message ?? "invalid",
        });
        return { refused: "malformed" };
      }
      const press = parsed.data;
      if (press.kind === "approval") return judge.approval(press);
      return press.kind === "model" ? judge.model(press) : judge.list(press);
    });
  }

  private async forward(
    conversationKey: string,
    press: ForwardedPress,
  ): Promise<JsonValue | "unanswered" | undefined> {
    let owner: string | undefined;
    try {
      owner = await this.o.ownership.servedElsewhere(conversationKey);
    } catch (error) {
      // Unknown owner: judged here, where the prompt is not open, so the press approves nothing.
      this.o.logger.warn(`${this.o.channel}: could not look up who serves ${conversationKey}`, {
        error: String(error),
      });
      return undefined;
    }
    if (owner === undefined) return undefined;
    const answer = await this.o.ownership.forward(owner, this.o.channel, press);
    return answer === undefined ? "unanswered" : answer;
  }

  /**
   * The serving gateway's outcome of `press`; `unconfirmed` when it gave none in time, refused (it
   * stopped serving) or answered something malformed: nothing was judged, so nothing is approved.
   */
  private async judged<T>(
    conversationKey: string,
    press: ForwardedPress,
    outcome: z.ZodType<T>,
    unconfirmed: T,
  ): Promise<T | undefined> {
    const answer = await this.forward(conversationKey, press);
    if (answer === undefined) return undefined;
    if (answer === "unanswered") return unconfirmed;
    const parsed = outcome.safeParse(answer);
    if (parsed.success) return parsed.data;
    this.o.logger.warn(`${this.o.channel}: a forwarded ${press.kind} press got no usable answer`);
    return unconfirmed;
  }
}
