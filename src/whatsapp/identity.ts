/**
 * Who wrote a message, folded to one form before anything compares it to configuration. WhatsApp
 * addresses a person either by phone number (`4917…@s.whatsapp.net`) or by a linked identity
 * (`<id>@lid`), and the two user parts are UNRELATED strings; the operator writes phone numbers, so
 * an `@lid` sender is resolved to their phone JID first: the alternate address the message itself
 * carries (`remoteJidAlt`/`participantAlt`), else baileys' LID mapping, cached. An alias that
 * cannot be resolved keeps its `@lid` form and so never matches a phone number: denied, the safe
 * direction. Without the fold an allow-listed person writing from a LID would be silently ignored.
 */
import { isJidGroup, isLidUser, jidNormalizedUser } from "@whiskeysockets/baileys";
import type { Logger } from "../messaging/base/logger.js";
import type { WAMessageKey } from "./wire.js";

/** The linked account, the one person who is the operator. */
export interface Operator {
  /** The phone JID without a device suffix: `4917012345678@s.whatsapp.net`. */
  pn: string;
  /** The account's own linked identity, when known: `123456789@lid`. */
  lid: string | undefined;
  /** `+4917012345678`: how userIds are written. */
  userId: string;
}

/** A sender after the fold. `userId` is E.164 for a phone JID, `lid:<id>` for an unresolved alias. */
export interface Sender {
  jid: string;
  userId: string;
  resolved: boolean;
}

const userPart = (jid: string) => (jid.split("@")[0] ?? "").split(":")[0] ?? "";

/** `+<digits>` for a phone JID; `lid:<id>` otherwise (never equal to a configured number). */
export function userIdOf(jid: string): string {
  const user = userPart(jid);
  return isLidUser(jid) ? `lid:${user}` : `+${user}`;
}

export function operatorOf(me: { id: string; lid?: string | undefined }): Operator {
  const pn = jidNormalizedUser(me.id);
  return { pn, lid: me.lid ? jidNormalizedUser(me.lid) : undefined, userId: userIdOf(pn) };
}

/** The chat is the operator's own ("Message yourself"): their phone JID, or their own LID. */
export function isSelfChat(chat: string, operator: Operator): boolean {
  const jid = jidNormalizedUser(chat);
  return jid === operator.pn || (operator.lid !== undefined && jid === operator.lid);
}

export type PnLookup = (lid: string) => Promise<string | null>;

/** Bounded: one entry per person who ever wrote; a stranger flood cannot grow it without limit. */
const MAX_CACHED = 10_000;

export class Identities {
  private readonly phones = new Map<string, string>();

  constructor(
    private readonly lookup: () => PnLookup | undefined,
    private readonly log: Logger,
  ) {}

  /** baileys learned a mapping (`lid-mapping.update`, or a message carrying both forms). */
  learn(lid: string, pn: string): void {
    if (!isLidUser(lid) || isLidUser(pn)) return;
    if (this.phones.size >= MAX_CACHED) this.phones.delete(this.phones.keys().next().value as string);
    this.phones.set(jidNormalizedUser(lid), jidNormalizedUser(pn));
  }

  /** The phone JID a LID stands for, when baileys' mapping (or a message) told it already. */
  phoneOf(lid: string): string | undefined {
    return this.phones.get(jidNormalizedUser(lid));
  }

  /**
   * Ask baileys' LID mapping store for the LIDs of the numbers the operator listed (at connect):
   * a proactive send to one of them in a LID chat is then matched before they ever wrote.
   */
  async warm(numbers: Iterable<string>, lookup: (pn: string) => Promise<string | null>): Promise<void> {
    for (const number of numbers) {
      const pn = `${number.replace(/^\+/, "")}@s.whatsapp.net`;
      try {
        const lid = await lookup(pn);
        if (lid) this.learn(lid, pn);
      } catch (error) {
        // A number whose LID stays unknown is matched once it writes (the message carries both).
        this.log.debug("whatsapp: LID lookup for a listed number failed", { error: String(error) });
      }
    }
  }

  /** The phone JID for `jid` (with `alt`, the message's own other address, tried first). */
  async fold(jid: string, alt?: string | null): Promise<Sender> {
    const normalized = jidNormalizedUser(jid);
    if (!isLidUser(normalized)) return { jid: normalized, userId: userIdOf(normalized), resolved: true };
    if (alt && !isLidUser(alt) && !isJidGroup(alt)) {
      this.learn(normalized, alt);
      const pn = jidNormalizedUser(alt);
      return { jid: pn, userId: userIdOf(pn), resolved: true };
    }
    const cached = this.phones.get(normalized);
    if (cached) return { jid: cached, userId: userIdOf(cached), resolved: true };
    try {
      const found = await this.lookup()?.(normalized);
      if (found && !isLidUser(found)) {
        this.learn(normalized, found);
        const pn = jidNormalizedUser(found);
        return { jid: pn, userId: userIdOf(pn), resolved: true };
      }
    } catch (error) {
      // A lookup that fails resolves nothing: the sender stays an alias, which is denied.
      this.log.warn("whatsapp: LID lookup failed", { error: String(error) });
    }
    return { jid: normalized, userId: userIdOf(normalized), resolved: false };
  }

  /** The author of a message: the operator for our own account's, else the participant or the chat. */
  async senderOf(key: WAMessageKey, operator: Operator): Promise<Sender> {
    if (key.fromMe) return { jid: operator.pn, userId: operator.userId, resolved: true };
    const chat = key.remoteJid ?? "";
    if (isJidGroup(chat)) return this.fold(key.participant ?? "", key.participantAlt);
    return this.fold(chat, key.remoteJidAlt);
  }
}
