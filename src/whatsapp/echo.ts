/**
 * Echo discipline. Everything the linked account sends comes back on the event stream as `fromMe`,
 * shaped exactly alike whether the operator typed it on their phone or parley sent it, so content
 * cannot tell them apart (the operator may quote the agent; a marker would leak into the chat).
 * parley therefore names every message it sends itself (`messageId`), writes the id here BEFORE the
 * send leaves, and drops a `fromMe` event whose id it knows; an unknown one is the operator typing.
 *
 * Reads never consume: WhatsApp delivers again after a reconnect (an `append` batch), and a one-shot
 * pop would let that redelivery through as a phantom operator command. The ids are appended to a
 * file in the WhatsApp folder (owner-only) so they survive a restart; the file is compacted at open
 * to the newest `maxIds`.
 */
import { createHash, randomBytes } from "node:crypto";
import { appendFileSync, existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SENT_IDS_FILE, whatsappDir } from "./home.js";

/** Far more than a month of answers; each line is ~25 bytes. */
export const DEFAULT_MAX_IDS = 100_000;

export class SentIds {
  private readonly ids = new Set<string>();
  private readonly path: string;

  private constructor(
    home: string,
    private readonly maxIds: number,
  ) {
    this.path = join(whatsappDir(home), SENT_IDS_FILE);
  }

  /** Load what earlier runs sent (the folder must exist: the auth state creates it). */
  static open(home: string, maxIds = DEFAULT_MAX_IDS): SentIds {
    const ledger = new SentIds(home, maxIds);
    ledger.load();
    return ledger;
  }

  has(id: string | null | undefined): boolean {
    return typeof id === "string" && this.ids.has(id);
  }

  /**
   * Durable before it returns: called right before the send leaves, so a crash after the send can
   * never turn its echo into an operator message. Synchronous on purpose: nothing may run between
   * the write and the send that would let the echo arrive first.
   */
  remember(id: string): void {
    if (this.ids.has(id)) return;
    appendFileSync(this.path, `${id}\n`, { mode: 0o600 });
    this.ids.add(id);
  }

  get size(): number {
    return this.ids.size;
  }

  private load(): void {
    if (!existsSync(this.path)) return;
    const lines = readFileSync(this.path, "utf8").split("\n").filter(Boolean);
    const kept = lines.slice(-this.maxIds);
    for (const id of kept) this.ids.add(id);
    if (kept.length < lines.length) {
      // Rewritten whole and renamed: a crash mid-compaction keeps the old file.
      const tmp = `${this.path}.tmp`;
      writeFileSync(tmp, `${kept.join("\n")}\n`, { mode: 0o600 });
      renameSync(tmp, this.path);
    }
  }
}

/**
 * The id of a message parley is about to send. With a part key (a turn's numbered part, stable
 * across a restart) the id is derived from it, so a part re-sent after a crash carries the same id
 * as the first attempt and its echo is recognised either way; otherwise it is random. The shape is
 * WhatsApp Web's own: `3EB0` and hexadecimal, 22 characters.
 */
export function outgoingMessageId(account: string, partKey?: string): string {
  const body = partKey
    ? createHash("sha256").update(`${account}\n${partKey}`).digest("hex")
    : randomBytes(16).toString("hex");
  return `3EB0${body.slice(0, 18).toUpperCase()}`;
}
