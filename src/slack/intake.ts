/**
 * Slack's deliveries into the hub. An event goes screen -> transport.receive (bots dropped, the gate
 * audited) -> hub.receive, journaled under its event_id BEFORE the delivery is acknowledged, so a
 * redelivery (Slack's retry_attempt, X-Slack-Retry-Num) of an event already taken is acknowledged
 * and dropped by the journal, and an event the journal could not take is left unacknowledged for
 * Slack to send again. A press is acknowledged at once (Slack's 3 s window), then resolved: an
 * approval through hub.press (the nonce decides; a stale or forged one approves nothing), an
 * [OPTIONS:] choice re-dispatched with interpretCommands=false, a model pick through the hub's
 * picker. A slash command is acknowledged at once and answered ephemerally.
 */
import type { ChannelContext } from "../messaging/channel/contract.js";
import type { ConversationHub } from "../messaging/channel/hub.js";
import { unknownPress } from "../messaging/channel/inbound-drops.js";
import type { IntakeTicket } from "../messaging/channel/journal.js";
import type { InboundMessage } from "../messaging/channel/transport.js";
import { buttonLabel, context, parseActionId } from "./blocks.js";
import type { HeldAck } from "./receiver.js";
import type { SlackAddress, SlackExtra, SlackSurface } from "./surface.js";
import type { SlackApi, SlackTransport } from "./transport.js";
import type { SlackBlockActions, SlackEnvelope, SlackSlashCommand } from "./wire.js";

export const NOT_ALLOWED = "You are not allowed to use this bot.";
export const CHOICE_GONE = "That choice is no longer available.";

export class SlackEvents {
  constructor(
    private readonly transport: SlackTransport,
    private readonly api: SlackApi,
    private readonly surface: SlackSurface,
    private readonly hub: ConversationHub<SlackAddress, SlackExtra>,
    private readonly ctx: Pick<ChannelContext, "logger" | "grant" | "drops">,
    private readonly owner: string | undefined,
  ) {}

  /** Keep a press's or a command's handling in flight until it settles (shutdown waits for it). */
  track(work: Promise<unknown>): void {
    void this.hub.track(work);
  }

  private addressOf(message: InboundMessage): SlackAddress {
    return {
      channel: message.conversationId,
      ...(message.threadId ? { threadTs: message.threadId } : {}),
      userId: message.userId,
      teamId: this.transport.teamOf(message),
      dm: this.transport.isDirect(message),
    };
  }

  /**
   * One message event. Resolves once the delivery may be acknowledged (the journal has it, or it
   * was dropped); the routing and the turn go on in the background, tracked by the hub.
   */
  async onEvent(envelope: Extract<SlackEnvelope, { kind: "event" }>, held: HeldAck): Promise<void> {
    if (!this.transport.screen(envelope)) return held.ack();
    const outcome = await this.transport.receive(envelope);
    if (outcome.status !== "dispatched") return held.ack();
    const message = outcome.message;
    const address = this.addressOf(message);
    // The bot answers here now: later replies in this thread need no mention.
    if (address.threadTs) this.transport.answering(address.channel, address.threadTs);
    this.surface.noteThread(address);
    const parsed = message.attachments.length > 0 ? null : this.hub.commands.parse(message.text);
    let accepted: (ticket: IntakeTicket | null | undefined) => void = () => {};
    const journaled = new Promise<void>((resolve) => {
      accepted = () => resolve();
    });
    const routed = this.hub.receive(
      {
        address,
        userId: message.userId,
        text: message.text,
        attachments: message.attachments,
        isMention: message.isMention,
        parsed,
        ...(message.messageId ? { messageId: message.messageId } : {}),
      },
      { platformId: `event:${envelope.eventId}` },
      { onAccepted: accepted },
    );
    void this.hub.track(routed.then((handled) => handled.turn));
    try {
      await Promise.race([journaled, routed.then(() => {})]);
    } catch (error) {
      // Not journaled: no acknowledgement, so Slack delivers the event again.
      held.decline();
      this.ctx.logger.warn("slack: the journal did not take an event; Slack will deliver it again", {
        error: String(error),
      });
      return;
    }
    await held.ack();
  }

  /** A press, already acknowledged by the listener. */
  async onAction(action: SlackBlockActions): Promise<void> {
    const outcome = await this.transport.receive({ kind: "action", action });
    if (outcome.status !== "dispatched") return;
    const message = outcome.message;
    const address = this.addressOf(message);
    const pressed = action.actions[0];
    const target = parseActionId(pressed?.action_id ?? "");
    if (!pressed || !target) {
      // Matched parley's prefix but names nothing parley draws: nothing to settle.
      this.ctx.drops.record(unknownPress(message.userId, message.conversationId, "block_actions"));
      return;
    }
    if (target.kind === "approval") {
      if (target.grant && !(address.dm && message.userId === this.owner)) {
        // A forged "Approve + auto-approve": the grant refuses (and audits) it; nothing is approved.
        const refusal = await this.ctx.grant.command("on", this.grantCaller(address, message.userId));
        await this.surface.ephemeral(address, refusal);
        return;
      }
      const pressedOutcome = await this.hub.press(address, {
        requestId: target.requestId,
        nonce: target.nonce,
        verdict: target.verdict,
      });
      if (!pressedOutcome.ok) {
        await this.surface.ephemeral(address, pressedOutcome.text);
        return;
      }
      // The one process-wide grant, armed only after the press itself was valid.
      if (target.grant)
        await this.surface.reply(
          address,
          await this.ctx.grant.command("on", this.grantCaller(address, message.userId)),
        );
      return;
    }
    const shown = action.message;
    if (target.kind === "model") {
      if (!shown)
        return void (await this.surface.ephemeral(
          address,
          "That list is no longer available: ask for a new one.",
        ));
      const pick = await this.hub.pickModel(
        address,
        { handle: shown.ts, index: target.index, presser: message.userId },
        this.surface.pickers(address),
      );
      if ("refusal" in pick) await this.surface.ephemeral(address, pick.refusal);
      else await pick.applied;
      return;
    }
    // An option press: the label comes back from the button the user actually saw.
    const label = shown ? buttonLabel(shown.blocks, pressed.action_id) : undefined;
    if (!label || !shown) return void (await this.surface.ephemeral(address, CHOICE_GONE));
    // The buttons go; the choice is written where they were (the message's own text stays).
    const res = await this.api.update({
      channel: address.channel,
      ts: shown.ts,
      blocks: [context(`✔️ ${label}`)],
    });
    if (!res.ok) this.ctx.logger.debug("slack choice update failed", { error: res.error });
    // A label is model-authored: re-dispatched with command interpretation OFF, journaled like a
    // message (the choice is the user's next message to the agent).
    const handled = await this.hub.receive(
      { address, userId: message.userId, text: label, interpretCommands: false },
      { platformId: `action:${pressed.action_ts ?? `${shown.ts}:${pressed.action_id}`}` },
    );
    await handled.turn;
  }

  /** A slash command, already acknowledged: its answer is seen by its sender alone. */
  async onCommand(command: SlackSlashCommand): Promise<void> {
    const outcome = await this.transport.receive({ kind: "command", command });
    const where = { channel: command.channel_id, userId: command.user_id };
    if (outcome.status === "denied") return void (await this.surface.ephemeral(where, NOT_ALLOWED));
    if (outcome.status !== "dispatched") return;
    const message = outcome.message;
    const thread = this.surface.latestThread(command.channel_id, command.user_id);
    const address: SlackAddress = { ...this.addressOf(message), ...(thread ? { threadTs: thread } : {}) };
    const sub = command.text.trim();
    const replyTo = (text: string) => this.surface.ephemeral(address, text);
    const choice = this.hub.menuChoice(`!${sub || "help"}`, "as a slash command");
    if ("reply" in choice) return void (await replyTo(choice.reply));
    const { parsed } = choice;
    const { turn } = await this.hub.handle({
      address,
      userId: message.userId,
      text: `!${sub}`,
      parsed,
      replyTo,
    });
    await turn;
  }

  private grantCaller(address: SlackAddress, userId: string) {
    return {
      source: "slack",
      caller: userId,
      owner: userId === this.owner,
      direct: address.dm,
      command: "!yolo",
      notify: async (text: string) => void (await this.surface.reply(address, text)),
    };
  }
}
