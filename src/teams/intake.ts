/**
 * Teams' intake: one activity the SDK has authenticated, through the gates, into the hub. Order is
 * the security property, so it is written once here:
 *
 *   parse → the token's issuer is the configured one (the channel path of validation) → the
 *   transport's gates (channel msteams, an allowed serviceUrl equal to the token's claim, personal
 *   scope), audited → a replayed activity id is dropped (after attestation, so an unattested
 *   activity cannot take a dedupe slot) → the sender's identity (people.ts) → authorization
 *   (deny by default, audited) → the route is stored → the hub.
 *
 * A message is journaled before the request is answered (accept-before-ack: the Connector
 * redelivers an unanswered activity, and the journal drops the copy); its turn runs in the
 * background. Past teams.maxInflightTurns a new message is shed with a notice, except /stop and
 * card clicks, which are how a saturated gateway gets unstuck (neither starts a turn). A card click
 * is an ordinary message carrying the button's data: approvals go to hub.press (the auto-approve
 * button arms the one grant through the shared /yolo helper first, owner only, and only when the
 * press will count), [OPTIONS:] picks become the user's next message with command interpretation
 * off, model and session lists resolve an index against what this process offered.
 */
import type { TurnContext } from "botbuilder";
import type { ChannelContext } from "../messaging/channel/contract.js";
import type { ConversationHub } from "../messaging/channel/hub.js";
import { approvalOutcomeLabel } from "../messaging/channel/render-kit.js";
import type { IncomingMessage } from "../messaging/channel/surface.js";
import type { CardPress, ChoiceBook } from "./cards.js";
import { parseSubmit, settledCard } from "./cards.js";
import type { TeamsMember } from "./client.js";
import { attachmentsActivity } from "./outbox.js";
import type { TeamsPeople } from "./people.js";
import type { TeamsAddress, TeamsRoutes } from "./routes.js";
import type { SessionPress } from "./session-picker.js";
import { TEAMS_SESSION_LIST } from "./session-picker.js";
import type { TeamsSurface } from "./surface.js";
import type { TeamsTransport } from "./transport.js";
import type { TeamsActivity } from "./wire.js";
import { activitySchema, tenantOf } from "./wire.js";

export const BUSY_NOTICE =
  "parley is working on as many conversations as it takes at once; please send that again in a minute.";
const CHOICE_GONE = "That choice is no longer available.";
const UNREADABLE_PRESS = "That button could not be read; ask again.";
const AUTO_OWNER_ONLY = "Only the owner of this bot can switch auto-approve on.";
/** Activity ids remembered for the replay drop (the journal keeps its own, durable, window). */
const SEEN_IDS = 4096;

export interface TeamsIntakeOptions {
  appId: string;
  tokenIssuer: string;
  maxInflightTurns: number;
  claimsOf(ctx: TurnContext): { issuer: string; serviceUrl: string };
  memberOf(ctx: TurnContext, accountId: string): Promise<TeamsMember>;
  isOwner(identity: string): boolean;
  transport: TeamsTransport;
  surface: TeamsSurface;
  hub: ConversationHub<TeamsAddress>;
  routes: TeamsRoutes;
  people: TeamsPeople;
  choices: ChoiceBook;
  ctx: Pick<ChannelContext, "audit" | "logger" | "grant" | "drops">;
}

/**
 * What the endpoint answers besides the SDK's 200: an activity refused by the gates answers 403,
 * so a sender on another channel (Direct Line, Web Chat) is shown a failed send, not a silence.
 */
export type ActivityAnswer = { refuseWith: 403 } | undefined;

/** Update types parley knows: an install is acted on, any other update of these types is not news. */
const UPDATE_TYPES: ReadonlySet<string> = new Set(["conversationUpdate", "installationUpdate"]);

type Kind = "message" | "press" | "install" | "other";

function kindOf(a: TeamsActivity): Kind {
  if (a.type === "message")
    return a.value !== undefined && (a.text ?? "").trim() === "" ? "press" : "message";
  if (a.type === "conversationUpdate")
    return a.membersAdded?.some((m) => m.id === a.recipient?.id) ? "install" : "other";
  if (a.type === "installationUpdate") return a.action?.startsWith("add") ? "install" : "other";
  return "other";
}

/** What an unreadable activity claimed to be, for the drop's row (its type when it named one). */
function shapeOf(raw: unknown): string {
  const type = (raw as { type?: unknown } | null)?.type;
  return typeof type === "string" ? type.slice(0, 64) : "(no type)";
}

export class TeamsIntake {
  private readonly seen = new Set<string>();
  private inflight = 0;

  constructor(private readonly o: TeamsIntakeOptions) {}

  /**
   * The SDK's logic for one authenticated activity; returning undefined answers the Connector 200.
   * Every activity that does not become a message, a press or an install is recorded as a drop.
   */
  async onActivity(turn: TurnContext): Promise<ActivityAnswer> {
    const drops = this.o.ctx.drops;
    const parsed = activitySchema.safeParse(turn.activity);
    if (!parsed.success) {
      drops.record({ reason: "unparseable", shape: shapeOf(turn.activity) });
      return;
    }
    const a = parsed.data;
    const claims = this.o.claimsOf(turn);
    if (claims.issuer !== this.o.tokenIssuer) {
      drops.record({ reason: "token_issuer", outcome: "denied" });
      return;
    }
    if (!this.o.transport.screen(a, claims.serviceUrl)) return { refuseWith: 403 };
    if (a.id && this.seen.has(a.id)) {
      drops.record({ reason: "replayed_activity", fields: { activity_type: a.type } });
      return;
    }
    const kind = kindOf(a);
    if (kind === "other") {
      // A known update that is not the bot's install (a member left, the bot removed) is not news.
      if (UPDATE_TYPES.has(a.type))
        drops.record({ reason: "update_ignored", fields: { activity_type: a.type } });
      else drops.record({ reason: "unknown_shape", shape: a.type });
      return;
    }
    const who = await this.o.people.resolve(
      { id: a.from.id, ...(a.from.aadObjectId ? { aadObjectId: a.from.aadObjectId } : {}) },
      () => this.o.memberOf(turn, a.from.id),
    );
    if (!who) {
      drops.record({ reason: "identity_unresolved", outcome: "denied" });
      return;
    }
    const tenantId = tenantOf(a);
    const address: TeamsAddress = {
      conversationId: a.conversation.id,
      serviceUrl: a.serviceUrl,
      ...(tenantId ? { tenantId } : {}),
      userAccountId: a.from.id,
      identity: who.identity,
      botId: a.recipient?.id ?? `28:${this.o.appId}`,
    };
    if (kind === "message") return void (await this.onMessage(a, address));
    // Neither a click nor an install is a message to normalize: the bot check and the allow-list here.
    if (a.from.role === "bot" || a.from.id.startsWith("28:")) {
      drops.record({ reason: "bot_echo", fields: { activity_type: a.type } });
      return;
    }
    if (!this.o.transport.admitsIdentity(address.identity, kind === "press" ? "card_submit" : a.type)) return;
    this.remember(a);
    await this.o.routes.remember(address);
    if (kind === "install") return void (await this.onInstall(a, address));
    await this.onPress(a, address);
  }

  private remember(a: TeamsActivity): void {
    if (!a.id) return;
    this.seen.add(a.id);
    if (this.seen.size > SEEN_IDS) this.seen.delete(this.seen.values().next().value as string);
  }

  private async onMessage(a: TeamsActivity, address: TeamsAddress): Promise<void> {
    const outcome = await this.o.transport.receive({ activity: a, identity: address.identity });
    if (outcome.status !== "dispatched") return;
    const message = outcome.message;
    await this.o.routes.remember(address);
    // A caption is content, never a command (it would cancel the turn AND drop the file).
    const parsed = message.attachments.length > 0 ? null : this.o.hub.commands.parse(message.text);
    const stop = parsed?.kind === "command" && parsed.spec.name === "stop";
    if (this.inflight >= this.o.maxInflightTurns && !stop) {
      this.o.ctx.drops.record({
        reason: "shed",
        operation: "teams_intake",
        outcome: "refused",
        fields: { inflight: this.inflight },
      });
      this.remember(a);
      await this.o.surface.reply(address, BUSY_NOTICE);
      return;
    }
    await this.receive(
      {
        address,
        userId: message.userId,
        text: message.text,
        attachments: message.attachments,
        ...(message.messageId ? { messageId: message.messageId } : {}),
        parsed,
      },
      a,
    );
  }

  /**
   * Journal the message, resolving once it is journaled (the Connector is answered then); the
   * routing and the turn go on in the background. Rejects when it could not be journaled, so the
   * request fails and the Connector delivers the activity again.
   */
  private receive(incoming: IncomingMessage<TeamsAddress>, a: TeamsActivity): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let journaled = false;
      // A copy the journal kept already (a restart, another gateway) is counted there ("redelivered").
      const onAccepted = () => {
        journaled = true;
        this.remember(a);
        resolve();
      };
      const routed = this.o.hub.receive(
        incoming,
        { platformId: a.id ? `activity:${a.id}` : null },
        { onAccepted },
      );
      routed.then(
        (handled) => {
          this.inflight += 1;
          void this.o.hub.track(handled.turn).finally(() => {
            this.inflight -= 1;
          });
          resolve();
        },
        (error: unknown) => {
          if (!journaled) reject(error);
          else this.o.ctx.logger.error("teams: routing a message failed", { error: String(error) });
        },
      );
    });
  }

  private async onInstall(a: TeamsActivity, address: TeamsAddress): Promise<void> {
    this.o.ctx.audit.log("teams_route", "granted", { reason: "installed", user: address.identity });
    // Teams sends two events for one install; the greeting answers the membership one only.
    if (a.type === "conversationUpdate")
      await this.o.surface.reply(
        address,
        `Hi! I pass your messages to the agent and its answers back. ${this.o.hub.commands.spell("help")} lists what else I do.`,
      );
  }

  private async onPress(a: TeamsActivity, address: TeamsAddress): Promise<void> {
    const press = parseSubmit(a.value);
    if (!press) {
      this.o.ctx.audit.log("teams_card", "refused", { reason: "malformed_press", user: address.identity });
      await this.o.surface.reply(address, UNREADABLE_PRESS);
      return;
    }
    const cardId = a.replyToId;
    switch (press.parley) {
      case "approval":
        return this.onApproval(address, cardId, press);
      case "option": {
        const label = cardId ? this.o.choices.take(cardId, address.conversationId, press.i) : null;
        if (label === null) {
          await this.o.surface.reply(address, CHOICE_GONE);
          return;
        }
        if (cardId) await this.settle(address, cardId, `✔️ ${label}`);
        // The label is the model's text: the user's next message, never a command.
        await this.receive({ address, userId: address.identity, text: label, interpretCommands: false }, a);
        return;
      }
      case "model": {
        const pick = await this.o.hub.pickModel(
          address,
          { handle: cardId ?? "", index: press.i, presser: address.identity },
          this.o.surface.pickers(address),
        );
        if ("refusal" in pick) await this.o.surface.reply(address, pick.refusal);
        else void this.o.hub.track(pick.applied);
        return;
      }
      case "session": {
        const data: SessionPress = {
          cardId: cardId ?? null,
          h: press.h,
          i: press.i,
          presser: address.identity,
        };
        const refusal = await this.o.hub.pressList(address, TEAMS_SESSION_LIST, data);
        if (refusal !== null) await this.o.surface.reply(address, refusal);
        return;
      }
    }
  }

  private async onApproval(
    address: TeamsAddress,
    cardId: string | undefined,
    press: Extract<CardPress, { parley: "approval" }>,
  ): Promise<void> {
    const p = { requestId: press.r, nonce: press.n };
    let grantNotice = "";
    let label: string | undefined;
    if (press.v === "approve_auto") {
      // The button is shown to the owner only; a press from anyone else is a forgery, and approves nothing.
      if (!this.o.isOwner(address.identity)) {
        this.o.ctx.audit.log("auto_approve", "refused", {
          source: "teams",
          caller: address.identity,
          reason: "not_owner",
        });
        await this.o.surface.reply(address, AUTO_OWNER_ONLY);
        return;
      }
      // Armed only when the press will count: a stale card must not switch prompts off everywhere.
      if (this.o.hub.promptOpen(address, p)) {
        grantNotice = this.armGrant(address);
        if (this.o.ctx.grant.isActive()) label = `${approvalOutcomeLabel("approve")} · ⚠️ auto-approve is on`;
      }
    }
    const outcome = await this.o.hub.press(address, {
      ...p,
      verdict: press.v === "deny" ? "deny" : "approve",
      ...(label ? { label } : {}),
    });
    if (!outcome.ok) {
      // A stale or forged press approves nothing; its card stops inviting presses (not when it went
      // unjudged: the prompt may still be open on the gateway serving the conversation).
      if (cardId && !("unconfirmed" in outcome)) await this.settle(address, cardId, outcome.text);
      await this.o.surface.reply(address, outcome.text);
      return;
    }
    // A prompt open on another gateway (several gateways): armed once its press counted there.
    if (press.v === "approve_auto" && !grantNotice) grantNotice = this.armGrant(address);
    if (grantNotice) await this.o.surface.reply(address, grantNotice);
  }

  /** The owner's Approve + auto-approve arms the one grant, as `/yolo on` would; its reply text. */
  private armGrant(address: TeamsAddress): string {
    return this.o.ctx.grant.command("on", {
      source: "teams",
      caller: address.identity,
      owner: true,
      direct: true,
      command: this.o.hub.commands.spell("yolo").replace(/`/g, ""),
      notify: async (text) => void (await this.o.surface.reply(address, text)),
    });
  }

  /** Replace a card with a line (its buttons gone); cosmetic, so a failure is only logged. */
  private async settle(address: TeamsAddress, cardId: string, text: string): Promise<void> {
    try {
      await this.o.surface.outbox(address).update(cardId, attachmentsActivity([settledCard(text)]));
    } catch (error) {
      this.o.ctx.logger.debug("teams: settling a card failed", { error: String(error) });
    }
  }
}
