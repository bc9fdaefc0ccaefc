/**
 * Discord's intake: Gateway events through the transport's silent screen and audited gate into the
 * hub. An allowed channel's message opens a thread; slash commands get their one ephemeral reply;
 * presses settle approvals, model lists, session lists and [OPTIONS:] choices. Events are handled
 * in the background: the Gateway reader is never blocked on a turn.
 */
import type { ChannelContext } from "../messaging/channel/contract.js";
import type { ConversationHub } from "../messaging/channel/hub.js";
import { unknownPress } from "../messaging/channel/inbound-drops.js";
import type { InboundMessage } from "../messaging/channel/transport.js";
import { discordSafe, fitPlatformCap } from "./format.js";
import type { ActionRow, MessageBody } from "./payload.js";
import { commandReply, EPHEMERAL } from "./payload.js";
import type { DiscordSessionPicker } from "./session-picker.js";
import type { DiscordAddress, DiscordExtra } from "./surface.js";
import { addressOf, CHANNEL_COMMAND_REFUSAL, type DiscordSurface } from "./surface.js";
import type { DiscordRest, DiscordTransport } from "./transport.js";
import { parseCustomId } from "./widgets.js";
import type { DiscordEnvelope, DiscordInteraction } from "./wire.js";
import { buttonLabel, INTERACTION_APPLICATION_COMMAND } from "./wire.js";
/** Gateway events, through the transport's screen and gate into the hub. */
export class DiscordEvents {
  /** Slash commands already given their one reply. */
  private readonly answered = new WeakSet<DiscordInteraction>();

  constructor(
    private readonly transport: DiscordTransport,
    private readonly rest: DiscordRest,
    private readonly surface: DiscordSurface,
    private readonly hub: ConversationHub<DiscordAddress, DiscordExtra>,
    private readonly resume: DiscordSessionPicker,
    private readonly ctx: Pick<ChannelContext, "logger" | "drops">,
  ) {}

  /** One Gateway dispatch. Runs in the background; failures are logged, never thrown at the reader. */
  handle(envelope: DiscordEnvelope): Promise<void> {
    return this.hub.track(this.route(envelope)).then(() => {});
  }

  private async route(envelope: DiscordEnvelope): Promise<void> {
    const t = this.transport;
    if (!(await t.screen(envelope))) return;
    const outcome = await t.receive(envelope);
    if (envelope.kind === "interaction") {
      if (outcome.status === "denied" && envelope.interaction.type === INTERACTION_APPLICATION_COMMAND)
        await this.slashReply(envelope.interaction, "You are not allowed to use this bot.");
      if (outcome.status === "dispatched") await this.onInteraction(envelope.interaction, outcome.message);
      return;
    }
    if (outcome.status !== "dispatched") return;
    let message = outcome.message;
    let parsed = message.attachments.length > 0 ? null : this.hub.commands.parse(message.text);
    if (t.routeFor(message) === "channel") {
      // A command names no conversation here (each message opens its own thread): answer, open nothing.
      if (parsed?.kind === "command" && !parsed.spec.override) {
        await this.surface.post(
          message.conversationId,
          parsed.spec.name === "help" ? this.hub.commands.help() : CHANNEL_COMMAND_REFUSAL,
        );
        return;
      }
      const routed = await t.openThreadFor(message);
      if (!routed) {
        // Audited with its status by the transport; counted here as a message that went nowhere.
        this.ctx.drops.record({
          reason: "thread_not_opened",
          user: message.userId,
          conversation: message.conversationId,
        });
        return;
      }
      message = routed;
      parsed = parsed?.kind === "command" ? parsed : null;
    }
    // Journaled before anything else happens to it: Discord never redelivers, so this is the only
    // copy once the event is read (the message id is still the dedupe key, for a Gateway replay).
    const { turn } = await this.hub.receive(
      {
        address: addressOf(message),
        userId: message.userId,
        text: message.text,
        attachments: message.attachments,
        isMention: message.isMention,
        parsed,
        ...(message.messageId ? { messageId: message.messageId } : {}),
      },
      { platformId: message.messageId ? `message:${message.messageId}` : null },
    );
    await turn;
  }

  /** A slash command's one reply: type 4, ephemeral (an approved thread is readable by every member). */
  slashReply(interaction: DiscordInteraction, text: string, components?: ActionRow[]): Promise<boolean> {
    this.answered.add(interaction);
    const [first] = components ? [text] : fitPlatformCap(discordSafe(text));
    return this.rest
      .interactionCallback(interaction.id, interaction.token, commandReply(first ?? "", components))
      .then((res) => {
        if (!res.ok) this.ctx.logger.warn("discord command reply failed", { status: res.status });
        return res.ok;
      });
  }

  private async ephemeral(interaction: DiscordInteraction, text: string): Promise<void> {
    const res = await this.rest.followup(interaction.token, { content: discordSafe(text), flags: EPHEMERAL });
    if (!res.ok) this.ctx.logger.warn("discord follow-up failed", { status: res.status });
  }

  private async onInteraction(interaction: DiscordInteraction, message: InboundMessage): Promise<void> {
    const address = addressOf(message);
    if (interaction.type === INTERACTION_APPLICATION_COMMAND) {
      // The one permitted first response is the command's reply itself.
      const replyTo = (text: string) => this.slashReply(interaction, text);
      if (this.transport.routeFor(message) === "channel" && !message.text.startsWith("/help")) {
        await replyTo(CHANNEL_COMMAND_REFUSAL);
        return;
      }
      const choice = this.hub.menuChoice(message.text, "from the menu");
      if ("reply" in choice) return void (await replyTo(choice.reply));
      const { parsed } = choice;
      const { turn } = await this.hub.handle({
        address,
        userId: message.userId,
        text: message.text,
        parsed,
        replyTo,
        extra: { slash: interaction },
      });
      await turn;
      // A widget posted in the conversation (a model list) still owes the slash command its reply.
      if (!this.answered.has(interaction)) await replyTo("Posted in this conversation.");
      return;
    }
    const customId = interaction.data?.custom_id ?? "";
    const target = parseCustomId(customId);
    if (!target) {
      // Not a component parley drew (acknowledged already by the transport): nothing to settle.
      this.ctx.drops.record(unknownPress(message.userId, message.conversationId, "component"));
      return;
    }
    if (target.kind === "approval") {
      const outcome = await this.hub.press(address, {
        requestId: target.requestId,
        nonce: target.nonce,
        verdict: target.approve ? "approve" : "deny",
      });
      if (!outcome.ok) await this.ephemeral(interaction, outcome.text);
      return;
    }
    const shown = interaction.message;
    if (target.kind === "model") {
      if (!shown) return this.ephemeral(interaction, "That list is no longer available: ask for a new one.");
      const pick = await this.hub.pickModel(
        address,
        { handle: shown.id, index: target.index, presser: message.userId },
        this.surface.pickers(address),
      );
      if ("refusal" in pick) return this.ephemeral(interaction, pick.refusal);
      await pick.applied;
      return;
    }
    if (target.kind === "session") {
      if (!shown || !this.resume)
        return this.ephemeral(interaction, "That list is no longer available: ask for a new one.");
      const refusal = await this.resume.press(
        this.surface.conversation(address).link,
        this.editShown(interaction, shown),
        target.handle,
        target.index,
        message.userId,
      );
      if (refusal !== null) await this.ephemeral(interaction, refusal);
      return;
    }
    // An option press: the label comes back from the component the user actually saw.
    const label = buttonLabel(interaction, customId);
    if (!label || !shown) return this.ephemeral(interaction, "That choice is no longer available.");
    await this.rest.editMessage(shown.channel_id, shown.id, {
      content: fitPlatformCap(`${shown.content}\n-# ✔️ ${discordSafe(label)}`)[0] ?? "",
      components: [],
    });
    // A label is model-authored: re-dispatched with command interpretation OFF, journaled like a
    // message (the choice is the user's next message to the agent).
    const { turn } = await this.hub.receive(
      { address, userId: message.userId, text: label, interpretCommands: false },
      { platformId: `interaction:${interaction.id}` },
    );
    await turn;
  }

  /**
   * How to edit the message a press sits on: an ephemeral one only through the press's @original
   * (after the deferred update the transport sent), anything else through its channel route.
   */
  private editShown(
    interaction: DiscordInteraction,
    shown: NonNullable<DiscordInteraction["message"]>,
  ): (body: MessageBody) => Promise<boolean> {
    return async (body) => {
      const ephemeral = ((shown.flags ?? 0) & EPHEMERAL) !== 0;
      const res = ephemeral
        ? await this.rest.editOriginal(interaction.token, body)
        : await this.rest.editMessage(shown.channel_id, shown.id, body);
      if (!res.ok) this.ctx.logger.warn("discord list edit failed", { status: res.status });
      return res.ok;
    };
  }
}
