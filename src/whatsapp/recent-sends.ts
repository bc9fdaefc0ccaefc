/**
 * What parley sent lately, for baileys' `getMessage`. A recipient device that could not decrypt a
 * message asks for it again (a retry receipt); baileys answers from its own recent-message cache,
 * which belongs to ONE socket (lib/Utils/message-retry-manager.js, 512 entries, made per
 * makeWASocket), and otherwise from `getMessage` (lib/Socket/messages-recv.js `sendMessagesAgain`).
 * After a reconnect the new socket's cache is empty, so a retry for a bubble of an answer sent
 * before it could only be answered from here; without it the recipient keeps "waiting for this
 * message". Kept in memory across sockets, bounded, oldest first out.
 */
import type { proto } from "@whiskeysockets/baileys";

/** Well over the messages of the retries' window (baileys keeps retry counts an hour). */
export const MAX_RECENT_SENDS = 2000;

export class RecentSends {
  private readonly messages = new Map<string, proto.IMessage>();

  constructor(private readonly max = MAX_RECENT_SENDS) {}

  remember(id: string | null | undefined, message: proto.IMessage | null | undefined): void {
    if (!id || !message) return;
    this.messages.delete(id);
    this.messages.set(id, message);
    while (this.messages.size > this.max) this.messages.delete(this.messages.keys().next().value as string);
  }

  /** baileys asks by key; message ids parley makes are unique, so the id alone finds it. */
  get(key: { id?: string | null }): proto.IMessage | undefined {
    return key.id ? this.messages.get(key.id) : undefined;
  }

  get size(): number {
    return this.messages.size;
  }
}
