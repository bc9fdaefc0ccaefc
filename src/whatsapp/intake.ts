/**
 * WhatsApp's intake: `messages.upsert` batches (both `notify`, live, and `append`, what arrives
 * after a reconnect) through the transport's audited gate into the hub, one message after another.
 * Before the gate: messages older than `whatsapp.maxCatchUpMinutes` are not answered (a reconnect
 * must not replay an afternoon), our own sends are dropped (echo.ts), the operator's messages to
 * other people and every unlisted group are not for parley at all, and the sender is folded to a
 * phone JID (identity.ts). After it: a group's mode decides whether the message is for the agent,
 * a group member's command is dropped (commands are the operator's), files in a group are read
 * only from an individually admitted sender (refusal spoken), and content parley cannot read gets a
 * visible note. The journal (hub.receive, keyed by the message id) is the only copy from then on:
 * WhatsApp has no acknowledgement to withhold, and a redelivered id is dropped there.
 */
import {
  isJidBroadcast,
  isJidGroup,
  isJidNewsletter,
  isJidStatusBroadcast,
  isLidUser,
  jidNormalizedUser,
} from "@whiskeysockets/baileys";
import type { ChannelContext } from "../messaging/channel/contract.js";
import type { ConversationHub } from "../messaging/channel/hub.js";
import type { TurnGuards } from "../messaging/channel/surface.js";
import { oneLine } from "../messaging/text/clip.js";
import type { SentIds } from "./echo.js";
import type { GroupCooldowns } from "./groups.js";
import { groupNote, PEER_NOTE } from "./groups.js";
import type { Identities, Operator } from "./identity.js";
import { isSelfChat } from "./identity.js";
import type { WhatsAppSettings } from "./index.js";
import { extract, lengthOf } from "./media.js";
import type { Admission } from "./policy.js";
import { admittedIndividually } from "./policy.js";
import type { WaAddress, WhatsAppExtra, WhatsAppIncoming, WhatsAppSurface } from "./surface.js";
import type { WaEnvelope, WhatsAppTransport } from "./transport.js";
import type { WAMessage, WaEvents, WaSocket } from "./wire.js";

export interface WhatsAppIntakeOptions {
  transport: WhatsAppTransport;
  surface: WhatsAppSurface;
  hub: ConversationHub<WaAddress, WhatsAppExtra>;
  ctx: Pick<ChannelContext, "clock" | "logger" | "audit">;
  settings: Pick<WhatsAppSettings, "groups" | "maxCatchUpMinutes">;
  admission: Admission;
  identities: Identities;
  cooldowns: GroupCooldowns;
  sent: SentIds;
  operator: () => Operator | null;
}

/** A log line, not a directory: an account in hundreds of groups gets the first ones and a count. */
const MAX_GROUPS_LISTED = 50;

export const GROUP_FILES_REFUSED =
  "⚠️ I only open files from people the operator admitted one to one; I did not read what you sent.";

export class WhatsAppIntake {
  private chain: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(private readonly o: WhatsAppIntakeOptions) {}

  /** A batch of messages, handled after the ones before it, each journaled before the next. */
  onUpsert(batch: WaEvents["messages.upsert"]): Promise<void> {
    const run = async () => {
      for (const message of batch.messages) {
        if (this.closed) return;
        try {
          await this.handle(message);
        } catch (error) {
          this.o.ctx.logger.error("whatsapp: handling a message failed", { error: String(error) });
        }
      }
    };
    this.chain = this.chain.then(run);
    return this.chain;
  }

  /** Our own send came back refused (status ERROR): said in the log, it will never show. */
  onUpdate(updates: WaEvents["messages.update"]): void {
    for (const u of updates)
      if (u.key.fromMe && u.update.status === 0 && this.o.sent.has(u.key.id))
        this.o.ctx.logger.warn("whatsapp: WhatsApp reports a message parley sent as failed", {
          id: u.key.id,
        });
  }

  onLidMapping(mapping: WaEvents["lid-mapping.update"]): void {
    this.o.identities.learn(mapping.lid, mapping.pn);
  }

  /** Take no more messages (a shutdown, or a crash in a test); what is journaled stays journaled. */
  async close(): Promise<void> {
    this.closed = true;
    await this.chain;
  }

  /**
   * At the first connect: list the groups this account is in (JID and name: the operator needs a
   * JID to configure `whatsapp.groups`, and WhatsApp's apps never show one), and name, once, the
   * configured groups it is not in (a typo or a group it left is otherwise silent, indistinguishable
   * from nobody writing). An empty answer means "in no groups" and "the call failed" alike, so it
   * names nothing.
   */
  async reportGroups(sock: WaSocket): Promise<void> {
    const configured = Object.keys(this.o.settings.groups);
    try {
      const all = await sock.groupFetchAllParticipating();
      const joined = new Set(Object.keys(all));
      if (joined.size === 0) return;
      const listed = [...joined].slice(0, MAX_GROUPS_LISTED).map((jid) => {
        const name = oneLine(all[jid]?.subject ?? "", 60);
        return `${jid}${name ? ` (${name})` : ""}${configured.includes(jid) ? " [configured]" : ""}`;
      });
      this.o.ctx.logger.info("whatsapp: groups this account is in (JIDs for whatsapp.groups)", {
        groups: listed.join(", "),
        ...(joined.size > MAX_GROUPS_LISTED ? { more: joined.size - MAX_GROUPS_LISTED } : {}),
      });
      const unknown = configured.filter((jid) => !joined.has(jid));
      if (unknown.length > 0)
        this.o.ctx.logger.warn(
          "whatsapp: configured groups this account is not in (their messages never arrive)",
          {
            groups: unknown.join(", "),
          },
        );
    } catch (error) {
      this.o.ctx.logger.debug("whatsapp: listing groups failed", { error: String(error) });
    }
  }

  private async handle(message: WAMessage): Promise<void> {
    const operator = this.o.operator();
    const key = message.key;
    const chat = key.remoteJid ? jidNormalizedUser(key.remoteJid) : "";
    if (!operator || !key.id || !chat) return;
    if (isJidStatusBroadcast(chat) || isJidBroadcast(chat) || isJidNewsletter(chat)) return;
    // Our own send: dropped by the transport before authorization (here only to skip the work).
    if (this.o.transport.isOwnSend(message)) return;
    const sentAt = (lengthOf(message.messageTimestamp) ?? 0) * 1000;
    const group = isJidGroup(chat) ? this.o.settings.groups[chat] : undefined;
    const kind = isJidGroup(chat) ? "group" : isSelfChat(chat, operator) ? "self" : "dm";
    // Not for parley: an unlisted group, the operator writing to someone else.
    if (kind === "group" && !group) return;
    if (kind === "dm" && key.fromMe) return;
    if (kind === "self" && !key.fromMe) return;
    const content = extract(message);
    if (!content) return;
    const maxAgeMs = this.o.settings.maxCatchUpMinutes * 60_000;
    if (this.o.ctx.clock.now() - sentAt > maxAgeMs) {
      this.o.ctx.audit.log("whatsapp.catch_up", "dropped", {
        reason: "too_old",
        age_s: Math.round((this.o.ctx.clock.now() - sentAt) / 1000),
      });
      return;
    }
    const sender = await this.o.identities.senderOf(key, operator);
    const isOperator = key.fromMe === true;
    const addressed =
      content.mentions.some((j) => this.isOperatorJid(j, operator)) ||
      (content.quotedId !== undefined && this.o.sent.has(content.quotedId));
    const envelope: WaEnvelope = { message, chat, kind, sender, operator: isOperator, content, addressed };
    const address: WaAddress = kind === "dm" ? { kind, chat, peer: sender.userId } : { kind, chat };
    const unprompted = group?.mode === "rules" && !addressed;
    if (group) {
      // mention mode: only what addresses the agent; rules mode: unprompted waits out the cooldown.
      if (group.mode === "mention" && !addressed) return;
      if (unprompted && this.o.cooldowns.cooling(chat)) return;
    }
    if (content.text.trim() === "" && content.files.length === 0) {
      // Only content parley cannot read: the gate still applies, then the note is the answer.
      if (this.o.transport.authorizeEnvelope(envelope) && !unprompted)
        await this.o.surface.reply(address, content.notes.join("\n"));
      return;
    }
    const outcome = await this.o.transport.receive(envelope);
    if (outcome.status !== "dispatched") return;
    let files = outcome.message.attachments;
    if (kind === "group" && !isOperator) {
      if (this.o.hub.commands.parse(content.text)?.kind === "command") {
        this.o.ctx.audit.log("whatsapp.command", "dropped", { user: sender.userId, reason: "group_member" });
        return;
      }
      if (files.length > 0 && !admittedIndividually(this.o.admission, sender.userId, false)) {
        this.o.ctx.audit.log("whatsapp.group_media", "refused", { user: sender.userId, group: chat });
        await this.o.surface.reply(address, GROUP_FILES_REFUSED);
        files = [];
        if (content.text.trim() === "") return;
      }
    }
    if (content.notes.length > 0 && !unprompted)
      await this.o.surface.reply(address, content.notes.join("\n"));
    const incoming: WhatsAppIncoming = {
      address,
      userId: sender.userId,
      text: content.text,
      attachments: files,
      ...(outcome.message.messageId !== undefined ? { messageId: outcome.message.messageId } : {}),
      isMention: addressed,
      ...(unprompted ? { extra: { unprompted: true } } : {}),
    };
    await this.journal(incoming, `msg:${chat}:${key.id}`, sentAt);
  }

  /** Resolves once the message is journaled; its routing and turn go on, tracked by the hub. */
  private journal(incoming: WhatsAppIncoming, platformId: string, receivedAtMs: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const work = this.o.hub.receive(
        incoming,
        { platformId, receivedAtMs },
        { onAccepted: () => resolve() },
      );
      void this.o.hub.track(
        work.then(
          (handled) => void this.o.hub.track(handled.turn),
          (error: unknown) => {
            resolve();
            throw error;
          },
        ),
      );
    });
  }

  private isOperatorJid(jid: string, operator: Operator): boolean {
    const normalized = jidNormalizedUser(jid);
    return normalized === operator.pn || (isLidUser(normalized) === true && normalized === operator.lid);
  }
}

/** What a message's sender may not do (the hub's guards): the operator is limited only in groups. */
export function whatsappGuards(
  settings: Pick<WhatsAppSettings, "groups">,
  operator: () => Operator | null,
): (message: WhatsAppIncoming) => TurnGuards {
  return (message) => {
    const isOperator = message.userId === operator()?.userId;
    const group = message.address.kind === "group" ? settings.groups[message.address.chat] : undefined;
    const note = group
      ? groupNote(group, message.extra?.unprompted === true)
      : isOperator
        ? undefined
        : PEER_NOTE;
    // Someone admitted to talk is not admitted to act: no tools, no steering, no approvals.
    const restricted: TurnGuards = isOperator
      ? {}
      : { denyAllTools: true, steer: false, answersApprovals: false };
    return { ...restricted, ...(note ? { promptNote: note } : {}) };
  };
}
