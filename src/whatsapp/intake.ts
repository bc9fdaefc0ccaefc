/**
 * WhatsApp's intake: `messages.upsert` batches (both `notify`, live, and `append`, what arrives
 * after a reconnect) through the transport's audited gate into the hub, one message after another.
 * Before the gate: messages older than `whatsapp.maxCatchUpMinutes` are not answered (a reconnect
 * must not replay an afternoon), our own sends are dropped (echo.ts), the operator's messages to
 * other people and every unlisted group are not for parley at all, and the sender is folded to a
 * phone JID (identity.ts). After it: a group's mode decides whether the message is for the agent,
 * a group member's command is dropped (commands are the operator's), files in a group are read
 * only from an individually admitted sender (refusal spoken), and content parley cannot read gets a
 * visible note, as does a message that cannot be read at all (view-once, undecryptable). The
 * journal (hub.receive, keyed by the message id) is the only copy from then on: WhatsApp has no
 * acknowledgement to withhold, and a redelivered id is dropped there. Nothing is left without a
 * trace: every message not handed on is counted with its reason (ctx.drops).
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
import type { GroupMetadataCache } from "./group-cache.js";
import type { GroupCooldowns } from "./groups.js";
import { groupNote, PEER_NOTE } from "./groups.js";
import type { Identities, Operator } from "./identity.js";
import { isSelfChat } from "./identity.js";
import type { WhatsAppSettings } from "./index.js";
import { contentTypeOf, extract, lengthOf, NOT_A_MESSAGE, unreadableNote } from "./media.js";
import type { Admission } from "./policy.js";
import { admittedIndividually } from "./policy.js";
import type { WaAddress, WhatsAppExtra, WhatsAppIncoming, WhatsAppSurface } from "./surface.js";
import type { WaEnvelope, WhatsAppTransport } from "./transport.js";
import type { WAMessage, WaEvents, WaSocket } from "./wire.js";

export interface WhatsAppIntakeOptions {
  transport: WhatsAppTransport;
  surface: WhatsAppSurface;
  hub: ConversationHub<WaAddress, WhatsAppExtra>;
  ctx: Pick<ChannelContext, "clock" | "logger" | "audit" | "drops">;
  settings: Pick<WhatsAppSettings, "groups" | "maxCatchUpMinutes">;
  admission: Admission;
  identities: Identities;
  cooldowns: GroupCooldowns;
  sent: SentIds;
  groupMetadata?: GroupMetadataCache;
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
          this.o.ctx.drops.record({
            reason: "handling_failed",
            fields: { error: String(error).slice(0, 200) },
          });
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

  /** A group changed (its subject, its members): its cached metadata is fetched again. */
  onGroupsUpdate(ids: readonly (string | undefined)[]): void {
    const cache = this.o.groupMetadata;
    if (!cache) return;
    for (const id of ids)
      if (id && (cache.has(id) || this.o.settings.groups[id] !== undefined)) cache.refresh(id);
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
   * names nothing. At every connect the answer fills the group metadata cache (one query for all).
   */
  async reportGroups(sock: WaSocket, first = true): Promise<void> {
    const configured = Object.keys(this.o.settings.groups);
    try {
      const all = await sock.groupFetchAllParticipating();
      this.o.groupMetadata?.fill(all);
      if (!first) return;
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
    const drops = this.o.ctx.drops;
    const operator = this.o.operator();
    const key = message.key;
    const chat = key.remoteJid ? jidNormalizedUser(key.remoteJid) : "";
    if (!key.id || !chat) {
      drops.record({ reason: "missing_id", ...(chat ? { conversation: chat } : {}) });
      return;
    }
    if (!operator) {
      // Only before the first connect reported the account: nothing can be authorized yet.
      drops.record({ reason: "no_account", conversation: chat });
      return;
    }
    if (isJidStatusBroadcast(chat) || isJidBroadcast(chat) || isJidNewsletter(chat)) {
      // Counted, never named: chats parley is not part of stay out of its records.
      drops.record({ reason: "broadcast" });
      return;
    }
    // Our own send: dropped before authorization (the transport would drop it too; counted once, here).
    if (this.o.transport.isOwnSend(message)) {
      drops.record({ reason: "bot_echo", conversation: chat });
      return;
    }
    const sentAt = (lengthOf(message.messageTimestamp) ?? 0) * 1000;
    const group = isJidGroup(chat) ? this.o.settings.groups[chat] : undefined;
    const kind = isJidGroup(chat) ? "group" : isSelfChat(chat, operator) ? "self" : "dm";
    // Not for parley: an unlisted group, the operator writing to someone else.
    if (kind === "group" && !group) {
      drops.record({ reason: "unlisted_group" });
      return;
    }
    if (kind === "dm" && key.fromMe) {
      drops.record({ reason: "operator_elsewhere" });
      return;
    }
    if (kind === "self" && !key.fromMe) {
      drops.record({ reason: "not_from_operator", conversation: chat });
      return;
    }
    const unreadable = unreadableNote(message);
    const content = unreadable
      ? { text: "", files: [], notes: [unreadable], mentions: [], quotedId: undefined }
      : extract(message);
    if (!content) {
      const type = contentTypeOf(message);
      if (type && NOT_A_MESSAGE.has(type))
        drops.record({ reason: "not_a_message", conversation: chat, fields: { type } });
      else drops.record({ reason: "unknown_shape", conversation: chat, shape: type ?? "no_content" });
      return;
    }
    const maxAgeMs = this.o.settings.maxCatchUpMinutes * 60_000;
    if (this.o.ctx.clock.now() - sentAt > maxAgeMs) {
      drops.record({
        reason: "too_old",
        operation: "whatsapp.catch_up",
        conversation: chat,
        fields: { age_s: Math.round((this.o.ctx.clock.now() - sentAt) / 1000) },
      });
      return;
    }
    const sender = await this.o.identities.senderOf(key, operator);
    if (kind === "dm" && !sender.resolved && this.o.admission.dmPolicy === "allowlist") {
      // A LID nobody mapped cannot be compared with a listed number: refused, and said why.
      drops.record({
        reason: "unmapped_lid",
        outcome: "denied",
        user: sender.userId,
        conversation: chat,
      });
      return;
    }
    const isOperator = key.fromMe === true;
    const addressed =
      content.mentions.some((j) => this.isOperatorJid(j, operator)) ||
      (content.quotedId !== undefined && this.o.sent.has(content.quotedId));
    const envelope: WaEnvelope = { message, chat, kind, sender, operator: isOperator, content, addressed };
    const address: WaAddress = kind === "dm" ? { kind, chat, peer: sender.userId } : { kind, chat };
    const unprompted = group?.mode === "rules" && !addressed;
    if (group) {
      // mention mode: only what addresses the agent; rules mode: unprompted waits out the cooldown.
      if (group.mode === "mention" && !addressed) {
        drops.record({ reason: "not_addressed", conversation: chat });
        return;
      }
      if (unprompted && this.o.cooldowns.cooling(chat)) {
        drops.record({ reason: "cooling_down", conversation: chat });
        return;
      }
    }
    if (content.text.trim() === "" && content.files.length === 0) {
      // Only content parley cannot read: the gate still applies, then the note is the answer.
      if (!this.o.transport.authorizeEnvelope(envelope)) return;
      if (unprompted) {
        drops.record({ reason: "unreadable_unprompted", conversation: chat });
        return;
      }
      await this.o.surface.reply(address, content.notes.join("\n"));
      return;
    }
    const outcome = await this.o.transport.receive(envelope);
    if (outcome.status !== "dispatched") return;
    let files = outcome.message.attachments;
    if (kind === "group" && !isOperator) {
      if (this.o.hub.commands.parse(content.text)?.kind === "command") {
        drops.record({
          reason: "group_member",
          operation: "whatsapp.command",
          user: sender.userId,
          conversation: chat,
        });
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
        {
          // A redelivery after a reconnect is counted by the journal ("redelivered").
          onAccepted: () => {
            resolve();
          },
        },
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
