/**
 * Webex's intake: device-socket frames -> hydrated messages -> the transport's audited gate -> the
 * hub. An activity is a signal only: the message is read back with GET /messages/{id}, its Hydra id
 * built as the SDK builds it (webex-js-sdk plugin-messages getMessageEvent): the activity's own id,
 * encoded with the cluster its conversation URL names in the U2C host map (remembered per
 * conversation). A card press is a `cardAction` activity whose parent is the pressed message; its
 * id is the attachment action's. Each frame is acked once handled (a message only once the journal
 * holds it); the activity id is kept in a bounded window so a redelivery, even mid-turn, is neither
 * steered in nor answered twice. Every frame that does not become a message is counted with a
 * reason (ctx.drops): none is dropped in silence. Own messages are dropped twice: by the actor's
 * e-mail before any call, and by the hydrated person id in the transport.
 */
import type { ApprovalVerdict } from "../messaging/approval/approvals.js";
import type { ChannelContext } from "../messaging/channel/contract.js";
import type { ConversationHub } from "../messaging/channel/hub.js";
import type { InboundDrop } from "../messaging/channel/inbound-drops.js";
import { APPROVAL_CHOICES, readPress } from "./cards.js";
import type { WebexClient } from "./client.js";
import { safeHost } from "./client.js";
import type { FileGate } from "./files.js";
import type { OfferBook, WebexAddress, WebexSurface } from "./surface.js";
import type { WebexEnvelope, WebexTransport } from "./transport.js";
import type { WebexActivity, WebexFrame } from "./wire.js";
import { activitySchema, hydraId } from "./wire.js";

/** Activity ids remembered: far more than can be redelivered while a turn runs. */
const SEEN_WINDOW = 2000;
/** Conversations whose cluster is remembered: a conversation never changes cluster. */
const CLUSTER_WINDOW = 5000;
/** The verbs that carry a message (messages.js verbToType: post and share are "created"). */
const MESSAGE_VERBS = new Set(["post", "share"]);
/** Mercury's own frames after authorization (socket-base _authorize waits for one of them). */
/** What a sender is told when a file is still being scanned after the bounded retries. */
export const SCANNING_TEXT =
  "Webex is still scanning a file, so it was not read yet. Send it again in a minute.";
const CONTROL_EVENTS = new Set(["mercury.buffer_state", "mercury.registration_status"]);

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

/** Insertion-ordered, bounded: the oldest entry goes first once `max` is passed. */
export class BoundedMap<V> {
  private readonly items = new Map<string, V>();
  constructor(private readonly max: number) {}
  get(key: string): V | undefined {
    return this.items.get(key);
  }
  set(key: string, value: V): void {
    this.items.delete(key);
    this.items.set(key, value);
    if (this.items.size > this.max) this.items.delete(this.items.keys().next().value ?? "");
  }
}

export type Client = Pick<
  WebexClient,
  "getMessage" | "getRoom" | "getAction" | "ack" | "botId" | "botEmails" | "botName" | "clusterOf"
>;

export class WebexIntake {
  private readonly seen = new BoundedSet(SEEN_WINDOW);
  /** Each conversation's Hydra cluster, by conversation uuid, as its URL last named it. */
  private readonly clusters = new BoundedMap<string>(CLUSTER_WINDOW);
  /** Hosts already warned about as unknown to the catalog. */
  private readonly warnedHosts = new BoundedSet(CLUSTER_WINDOW);

  constructor(
    private readonly client: Client,
    private readonly transport: WebexTransport,
    private readonly surface: WebexSurface,
    private readonly hub: ConversationHub<WebexAddress>,
    private readonly offers: OfferBook,
    private readonly files: FileGate,
    private readonly ctx: Pick<ChannelContext, "audit" | "logger" | "drops">,
  ) {}

  /** Frames are handled in the background; the socket is never blocked on a turn. */
  handleFrame(frame: WebexFrame): void {
    void this.hub.track(
      this.route(frame).catch((error: unknown) => {
        // Not acked: Webex sends it again, and a passing fault may not repeat. Counted either way.
        this.ctx.drops.record({ reason: "handling_failed", fields: { error: String(error).slice(0, 200) } });
        this.ctx.logger.error("webex: handling a frame failed", { error: String(error) });
      }),
    );
  }

  private done(frame: WebexFrame, activityId?: string): void {
    if (activityId) this.seen.add(activityId);
    this.client.ack(frame.id);
  }

  /** Acked (Webex would only send it again), counted and audited with its reason. */
  private drop(frame: WebexFrame, drop: InboundDrop, activityId?: string): void {
    this.ctx.drops.record(drop);
    this.done(frame, activityId);
  }

  private async route(frame: WebexFrame): Promise<void> {
    const eventType = frame.data?.eventType;
    if (eventType !== "conversation.activity") {
      const control = eventType !== undefined && CONTROL_EVENTS.has(eventType);
      return this.drop(frame, {
        reason: control ? "control" : "unknown_shape",
        shape: eventType ?? "no data",
      });
    }
    const parsed = activitySchema.safeParse(frame.data?.activity);
    if (!parsed.success) {
      const raw = frame.data?.activity as { id?: unknown; verb?: unknown } | undefined;
      const noId = typeof raw?.id !== "string" || raw.id === "";
      return this.drop(frame, {
        reason: noId ? "missing_id" : "unknown_shape",
        shape: `activity:${typeof raw?.verb === "string" ? raw.verb.slice(0, 40) : "?"}`,
      });
    }
    const activity = parsed.data;
    const actor = (activity.actor.emailAddress ?? "").toLowerCase();
    if (this.seen.has(activity.id))
      return this.drop(frame, { reason: "duplicate", user: actor, fields: { verb: activity.verb } });
    // First own-message drop: no call is spent on the bot's own posts.
    if (actor && this.client.botEmails.includes(actor))
      return this.drop(frame, { reason: "own_echo", fields: { verb: activity.verb } }, activity.id);
    const isMessage = MESSAGE_VERBS.has(activity.verb);
    const isPress = activity.verb === "cardAction";
    if (!isMessage && !isPress)
      return this.drop(frame, { reason: "ignored_verb", user: actor, shape: activity.verb }, activity.id);
    const cluster = this.clusterOf(activity);
    if (!cluster) {
      const host = activity.target?.url ? safeHost(activity.target.url) : "(no conversation url)";
      // No id can be built without the cluster (the SDK throws here too); the operator must see it,
      // once per host (each frame is still counted).
      if (!this.warnedHosts.has(host)) {
        this.warnedHosts.add(host);
        this.ctx.logger.warn("webex: an activity's conversation is on a host the U2C catalog does not know", {
          host,
        });
      }
      return this.drop(frame, { reason: "unknown_cluster", user: actor, fields: { host } }, activity.id);
    }
    if (isMessage) return this.message(frame, activity, cluster);
    // A press names the pressed message as its parent (conversation.js cardAction).
    if (activity.parent?.type !== "cardAction")
      return this.drop(
        frame,
        { reason: "unknown_shape", user: actor, shape: "cardAction:no parent" },
        activity.id,
      );
    return this.press(frame, activity, cluster);
  }

  /**
   * The conversation's Hydra cluster: from its URL through the host map (remembered for the
   * conversation), else what that conversation's URL named before; undefined when neither is known.
   */
  private clusterOf(activity: WebexActivity): string | undefined {
    const target = activity.target;
    if (!target) return undefined;
    const named = target.url ? this.client.clusterOf(target.url) : undefined;
    if (named) this.clusters.set(target.id, named);
    return named ?? this.clusters.get(target.id);
  }

  private async message(frame: WebexFrame, activity: WebexActivity, cluster: string): Promise<void> {
    const got = await this.client.getMessage(hydraId(cluster, "MESSAGE", activity.id));
    if (!got.ok)
      return this.drop(
        frame,
        {
          reason: "hydrate_failed",
          user: activity.actor.emailAddress?.toLowerCase(),
          fields: { status: got.status },
        },
        activity.id,
      );
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
        // Webex names no event for a scan's end: the sender is told to send it again, never left waiting.
        this.drop(frame, { reason: "file_scanning", user: message.userId }, activity.id);
        await this.surface.reply(address, `⏳ ${SCANNING_TEXT}`);
        return;
      }
      if (checked.kind === "refused") {
        this.drop(
          frame,
          { reason: "file_refused", user: message.userId, fields: { detail: checked.reason } },
          activity.id,
        );
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
    const email = (activity.actor.emailAddress ?? "").toLowerCase();
    const action = await this.client.getAction(hydraId(cluster, "ATTACHMENT_ACTION", activity.id));
    if (!action.ok)
      return this.drop(
        frame,
        { reason: "action_unreadable", user: email, fields: { status: action.status } },
        activity.id,
      );
    this.done(frame, activity.id);
    const room = await this.client.getRoom(action.data.roomId);
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
      this.ctx.drops.record({ reason: "not_ours", operation: "webex.card", user: email });
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
