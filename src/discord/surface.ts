/**
 * Discord on the kit. Its address is where a message was said (a DM, an allow-listed thread, an
 * autoThread-created one) and who said it; its surface posts through the REST client with the
 * mention guard on every body. Per Gateway event: the transport's silent screen and audited gate,
 * then the shared ConversationHub. Events are handled in the background: the Gateway reader is
 * never blocked on a turn.
 */
import type { ChannelContext } from "../messaging/channel/contract.js";
import type { ConversationHub } from "../messaging/channel/hub.js";
import type { ChannelSurface, Conversation, PickerSurface, TurnStart } from "../messaging/channel/surface.js";
import type { InboundAttachment, InboundMessage } from "../messaging/channel/transport.js";
import type { Attachment } from "../messaging/files/ingest.js";
import type { ReceiptSurface } from "../messaging/queue/receipt.js";
import { buildDmSessionKey } from "../messaging/session/keys.js";
import { DISCORD_SOFT_LIMIT, discordSafe, fitPlatformCap } from "./format.js";
import type { DiscordSettings } from "./index.js";
import type { ActionRow, MessageBody } from "./payload.js";
import { commandReply, EPHEMERAL } from "./payload.js";
import { DiscordRenderer } from "./renderer.js";
import type { DiscordSessionPicker } from "./session-picker.js";
import type { DiscordRest, DiscordTransport } from "./transport.js";
import { modelRows, parseCustomId } from "./widgets.js";
import type { DiscordEnvelope, DiscordInteraction } from "./wire.js";
import { buttonLabel, INTERACTION_APPLICATION_COMMAND } from "./wire.js";

/**
 * A command in an allowed channel (not a thread) would otherwise act on the sender's DM session,
 * which is not the conversation they are looking at.
 */
export const CHANNEL_COMMAND_REFUSAL =
  "Commands act on a conversation: use them inside a thread here (send a message to start one) or in a DM.";

/** The reaction that tells a user their mid-turn message was folded into the running turn. */
export const STEER_RECEIPT_EMOJI = "📥";

/** Where a Discord message was said: the channel (a DM channel or a thread) and the sender. */
export interface DiscordAddress {
  channelId: string;
  /** Set for a guild thread (it is its own channel, so equal to channelId). */
  threadId?: string;
  userId: string;
}

/** What a Discord message carries into the hub: the slash command a reply belongs to. */
export interface DiscordExtra {
  slash?: DiscordInteraction;
}

export function addressOf(message: InboundMessage): DiscordAddress {
  return {
    channelId: message.conversationId,
    ...(message.threadId ? { threadId: message.threadId } : {}),
    userId: message.userId,
  };
}

export interface DiscordSurfaceOptions {
  transport: DiscordTransport;
  rest: DiscordRest;
  settings: DiscordSettings;
  agentName: string;
  throttleMs?: number;
}

export class DiscordSurface implements ChannelSurface<DiscordAddress, DiscordExtra> {
  constructor(
    private readonly o: DiscordSurfaceOptions,
    private readonly ctx: Pick<ChannelContext, "clock" | "logger" | "audit" | "sessions">,
  ) {}

  conversation(a: DiscordAddress): Conversation {
    return {
      // A DM is keyed by its peer (so a proactive send can name its principal); a thread by itself.
      route: a.threadId ? `thread:${a.threadId}` : `dm:${a.userId}`,
      direct: !a.threadId,
      link: {
        channelType: "discord",
        conversationId: a.channelId,
        ...(a.threadId ? { threadId: a.threadId } : {}),
      },
    };
  }

  sessionKey(a: DiscordAddress, generation: number): string {
    return a.threadId
      ? buildDmSessionKey("discord", this.o.agentName, a.threadId, { gen: generation, chatType: "thread" })
      : buildDmSessionKey("discord", this.o.agentName, a.userId, { gen: generation });
  }

  /** True only when every part landed: a resume notice counts as delivered on confirmation alone. */
  async reply(a: DiscordAddress, text: string): Promise<boolean> {
    return this.post(a.channelId, text);
  }

  async post(channelId: string, text: string): Promise<boolean> {
    for (const part of fitPlatformCap(discordSafe(text))) {
      const res = await this.o.rest.createMessage(channelId, { content: part });
      if (!res.ok) {
        this.ctx.logger.warn("discord reply failed", { status: res.status });
        return false;
      }
    }
    return true;
  }

  receipts(a: DiscordAddress): ReceiptSurface {
    const rest = this.o.rest;
    return {
      post: async (text) => {
        const res = await rest.createMessage(a.channelId, { content: discordSafe(text) });
        return res.ok ? res.data.id : "";
      },
      edit: async (id, text) => {
        if (id) await rest.editMessage(a.channelId, id, { content: discordSafe(text) });
      },
    };
  }

  newRenderer(a: DiscordAddress, turn: TurnStart<DiscordExtra>): DiscordRenderer {
    const s = this.o.settings;
    return new DiscordRenderer({
      rest: this.o.rest,
      channelId: a.channelId,
      ...(turn.messageId ? { userMessageId: turn.messageId } : {}),
      toggles: { reactionsEnabled: s.reactionsEnabled, showThinking: s.showThinking },
      audit: this.ctx.audit,
      logger: this.ctx.logger,
      clock: this.ctx.clock,
      ...(this.o.throttleMs !== undefined ? { throttleMs: this.o.throttleMs } : {}),
      uploads: turn.files,
      contextUsage: async () => (await this.ctx.sessions.existingProvider(turn.sessionKey))?.contextUsagePct,
    });
  }

  attachments(files: { refs: readonly InboundAttachment[] }): Attachment[] {
    return files.refs.map((ref) => this.o.transport.attachmentSource(ref));
  }

  async acknowledgeSteer(a: DiscordAddress, messageId: string): Promise<void> {
    await this.o.rest.addReaction(a.channelId, messageId, STEER_RECEIPT_EMOJI);
  }

  /** Model lists as buttons on an ordinary channel message (an ephemeral reply cannot be edited later). */
  pickers(a: DiscordAddress): PickerSurface {
    const rest = this.o.rest;
    return {
      maxChars: DISCORD_SOFT_LIMIT,
      post: async (text, labels) => {
        const [content] = fitPlatformCap(discordSafe(text));
        const res = await rest.createMessage(a.channelId, {
          content: content ?? "",
          components: modelRows(labels),
        });
        return res.ok ? res.data.id : null;
      },
      settle: async (handle, text) => {
        const [content] = fitPlatformCap(discordSafe(text));
        const res = await rest.editMessage(a.channelId, handle, { content: content ?? "", components: [] });
        if (!res.ok) await this.post(a.channelId, text);
      },
    };
  }
}

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
    private readonly ctx: Pick<ChannelContext, "logger">,
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
      if (!routed) return;
      message = routed;
      parsed = parsed?.kind === "command" ? parsed : null;
    }
    const { turn } = await this.hub.handle({
      address: addressOf(message),
      userId: message.userId,
      text: message.text,
      attachments: message.attachments,
      isMention: message.isMention,
      parsed,
      ...(message.messageId ? { messageId: message.messageId } : {}),
    });
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
      const parsed = this.hub.commands.parse(message.text);
      if (parsed?.kind !== "command") {
        await replyTo("I don't know that command.");
        return;
      }
      if (parsed.spec.override) {
        await replyTo(
          parsed.arg
            ? "Send that as a message (`!queue <message>`), not from the menu."
            : this.hub.commands.usage(parsed.spec),
        );
        return;
      }
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
    if (!target) return;
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
    // A label is model-authored: re-dispatched with command interpretation OFF.
    const { turn } = await this.hub.handle({
      address,
      userId: message.userId,
      text: label,
      interpretCommands: false,
    });
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
