/**
 * Webex's intake: device-socket frames -> hydrated messages -> the transport's audited gate -> the
 * hub. An activity is a signal only: the message is read back with GET /messages/{id}, its id
 * encoded with the cluster the activity names (remembered for the connection, so an activity that
 * names none still reaches a non-US org). Each frame is acked once handled (a message only once the
 * journal holds it); the activity id is kept in a bounded window so a redelivery, even mid-turn, is
 * neither steered in nor answered twice. Own messages are dropped twice: by the actor's e-mail before
 * any call, and by the hydrated person id in the transport.
 */

import type { ApprovalVerdict } from "../messaging/approval/approvals.js";
import type { ChannelContext } from "../messaging/channel/contract.js";
import type { ConversationHub } from "../messaging/channel/hub.js";
import { APPROVAL_CHOICES, readPress } from "./cards.js";
import type { WebexClient } from "./client.js";
import type { FileGate } from "./files.js";
import type { OfferBook, WebexAddress, WebexSurface } from "./surface.js";
import type { WebexEnvelope, WebexTransport } from "./transport.js";
import type { WebexActivity, WebexFrame } from "./wire.js";
import { clusterOf, DEFAULT_CLUSTER, hydraId } from "./wire.js";

/** Activity ids remembered: far more than can be redelivered while a turn runs. */
const SEEN_WINDOW = 2000;

export class BoundedSet {
  private readonly items = new Set<string>();
  constructor(private readonly max: number) {}
  has(id: string): boolean {
    return this.items.has(id);
  }
  add(id: string): void {
    this.items.delete(id);
    this.items.add(id);
    if (this.items.size > this.max) this.items.delete(this.items.values().next().value ?? "");
  }
}

/** The bot's leading mention in a space, stripped on a word boundary ("parleybot" is not "parley"). */
export function stripLeadingMention(text: string, names: readonly string[]): string {
  const trimmed = text.trimStart();
  for (const name of names) {
    if (!name) continue;
    if (trimmed.toLowerCase().startsWith(name.toLowerCase())) {
      const rest = trimmed.slice(name.length);
      if (rest === "" || /^[\s,:]/u.test(rest)) return rest.replace(/^[\s,:]+/u, "");
    }
  }
  return text;
}

export type Client = Pick<
  WebexClient,
  "getMessage" | "getRoom" | "getAction" | "ack" | "botId" | "botEmails" | "botName" | "connection"
>;

export class WebexIntake {
  private readonly seen = new BoundedSet(SEEN_WINDOW);
  /** The cluster this connection's activities named last (forgotten when the socket reconnects). */
  private cluster: { connection: number; id: string } | undefined;

  constructor(
    private readonly client: Client,
    private readonly transport: WebexTransport,
    private readonly surface: WebexSurface,
    private readonly hub: ConversationHub<WebexAddress>,
    private readonly offers: OfferBook,
    private readonly files: FileGate,
    private readonly ctx: Pick<ChannelContext, "audit" | "logger">,
  ) {}

  /** Frames are handled in the background; the socket is never blocked on a turn. */
  handleFrame(frame: WebexFrame): void {
    void this.hub.track(
      this.route(frame).catch((error: unknown) => {
        this.ctx.logger.error("webex: handling a frame failed", { error: String(error) });
      }),
    );
  }

  private done(frame: WebexFrame, activityId?: string): void {
    if (activityId) this.seen.add(activityId);
    this.client.ack(frame.id);
  }

  private async route(frame: WebexFrame): Promise<void> {
    const activity = frame.data?.eventType === "conversation.activity" ? frame.data.activity : undefined;
    if (!activity) return this.done(frame);
    if (this.seen.has(activity.id)) return this.done(frame);
    const named = clusterOf(activity);
    const connection = this.client.connection;
    if (named) this.cluster = { connection, id: named };
    const remembered = this.cluster?.connection === connection ? this.cluster.id : undefined;
    const cluster = named ?? remembered ?? DEFAULT_CLUSTER;
    const actor = (activity.actor.emailAddress ?? "").toLowerCase();
    // First own-message drop: no call is spent on the bot's own posts.
    if (actor && this.client.botEmails.includes(actor)) return this.done(frame, activity.id);
    if (activity.verb === "post" || activity.verb === "share" || activity.verb === "update")
      return this.message(frame, activity, cluster);
    if (activity.verb === "cardAction") return this.press(frame, activity, cluster);
    return this.done(frame, activity.id);
  }

  private async message(frame: WebexFrame, activity: WebexActivity, cluster: string): Promise<void> {
    const objectId = activity.object?.id;
    if (!objectId) return this.done(frame, activity.id);
    const got = await this.client.getMessage(hydraId(cluster, "MESSAGE", objectId));
    if (!got.ok) {
      this.ctx.audit.log("inbound", "dropped", {
        channel: "webex",
        reason: "hydrate_failed",
        status: got.status,
      });
      return this.done(frame, activity.id);
    }
    const m = got.data;
    const envelope: WebexEnvelope = {
      messageId: m.id,
      roomId: m.roomId,
      roomType: m.roomType ?? "",
      personId: m.personId,
      email: (m.personEmail ?? activity.actor.emailAddress ?? "").toLowerCase(),
      text: m.text ?? m.markdown ?? "",
      files: m.files ?? [],
      mentioned: (m.mentionedPeople ?? []).includes(this.client.botId),
    };
    const outcome = await this.transport.receive(envelope);
    if (outcome.status !== "dispatched") return this.done(frame, activity.id);
    const message = outcome.message;
    const address: WebexAddress = {
      roomId: m.roomId,
      space: message.threadId !== undefined,
      email: message.userId,
    };
    let attachments = message.attachments;
    if (attachments.length > 0) {
      const checked = await this.files.check(attachments);
      if (checked.kind === "scanning") {
        // Not marked seen: the `update` activity Webex sends once the scan is over is acted on.
        this.client.ack(frame.id);
        return;
      }
      if (checked.kind === "refused") {
        this.ctx.audit.log("inbound", "dropped", {
          channel: "webex",
          reason: "file_refused",
          detail: checked.reason,
        });
        this.done(frame, activity.id);
        await this.surface.reply(address, `⚠️ ${checked.reason}`);
        return;
      }
      attachments = checked.attachments;
    }
    const text = address.space ? stripLeadingMention(message.text, [this.client.botName]) : message.text;
    this.transport.remember(m.roomId);
    const { turn } = await this.hub.receive(
      {
        address,
        userId: message.userId,
        text,
        attachments,
        messageId: m.id,
        isMention: message.isMention,
      },
      { platformId: `activity:${activity.id}` },
      // Acked only once the journal holds it: a crash before this leaves Webex to redeliver it.
      { onAccepted: () => this.done(frame, activity.id) },
    );
    await turn;
  }

  /** A card press: resolved (its room type first) and gated like a message, then by its nonce. */
  private async press(frame: WebexFrame, activity: WebexActivity, cluster: string): Promise<void> {
    this.done(frame, activity.id);
    const objectId = activity.object?.id;
    if (!objectId) return;
    const action = await this.client.getAction(hydraId(cluster, "ATTACHMENT_ACTION", objectId));
    if (!action.ok) {
      this.ctx.audit.log("inbound", "dropped", {
        channel: "webex",
        reason: "action_unreadable",
        status: action.status,
      });
      return;
    }
    const room = await this.client.getRoom(action.data.roomId);
    const email = (activity.actor.emailAddress ?? "").toLowerCase();
    const outcome = await this.transport.receive({
      messageId: action.data.messageId,
      roomId: action.data.roomId,
      roomType: room.ok ? room.data.type : "",
      personId: action.data.personId,
      email,
      text: "(card press)",
      files: [],
      mentioned: false,
    });
    if (outcome.status !== "dispatched") return;
    const address: WebexAddress = {
      roomId: action.data.roomId,
      space: outcome.message.threadId !== undefined,
      email: outcome.message.userId,
    };
    const press = readPress(action.data.inputs);
    if (!press) {
      this.ctx.audit.log("webex.card", "dropped", { reason: "not_ours", user: email });
      return;
    }
    if (press.kind === "approval") {
      const verdict: ApprovalVerdict | undefined = APPROVAL_CHOICES[press.choice];
      const result = verdict
        ? await this.hub.press(address, { requestId: press.requestId, nonce: press.nonce, verdict })
        : { ok: false as const, text: "" };
      this.ctx.audit.log(
        "webex.approval",
        result.ok ? (verdict === "deny" ? "denied" : "approved") : "refused",
        {
          request: press.requestId,
          user: email,
          ...(verdict ? { verdict } : { reason: "bad_choice" }),
        },
      );
      // Reported neutrally: a stale or forged press learns nothing about the prompt.
      if (!result.ok && result.text) await this.surface.reply(address, result.text);
      return;
    }
    if (press.kind === "model") {
      const pick = await this.hub.pickModel(
        address,
        { handle: action.data.messageId, index: press.choice, presser: email },
        this.surface.pickers(address),
      );
      if ("refusal" in pick) await this.surface.reply(address, pick.refusal);
      else await pick.applied;
      return;
    }
    const label = this.offers.take(action.data.messageId, press.choice);
    if (label === null) {
      await this.surface.reply(address, "That choice is no longer available.");
      return;
    }
    // The press is echoed (the card cannot show it), then the label goes to the agent as content.
    await this.surface.reply(address, `✔️ ${label}`);
    const { turn } = await this.hub.receive(
      { address, userId: email, text: label, interpretCommands: false },
      { platformId: `activity:${activity.id}` },
    );
    await turn;
  }
}
