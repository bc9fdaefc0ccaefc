/**
 * Group metadata for baileys' `cachedGroupMetadata`. Every send to a group (each edit and reaction
 * too) needs the group's participants; without a cache baileys asks WhatsApp for them on every one
 * (lib/Socket/messages-send.js `relayMessage`: `cachedGroupMetadata(jid)`, else `groupMetadata`),
 * which a streamed answer turns into a burst of queries and, in the end, `rate-overlimit`. So each
 * group is fetched once (the list at connect, or the first send's miss, one at a time per group) and
 * refreshed when WhatsApp says it changed (`groups.update`, `group-participants.update`).
 */
import type { Logger } from "../messaging/base/logger.js";
import type { GroupMetadata, WaSocket } from "./wire.js";

/** An account in more groups than this keeps the ones it used last. */
const MAX_GROUPS = 1000;

export class GroupMetadataCache {
  private readonly groups = new Map<string, GroupMetadata>();
  private readonly inflight = new Map<string, Promise<GroupMetadata | undefined>>();

  constructor(
    private readonly socket: () => WaSocket | null,
    private readonly log: Logger,
  ) {}

  /** What `groupFetchAllParticipating` answered: every group at once. */
  fill(all: { [jid: string]: GroupMetadata }): void {
    for (const [jid, meta] of Object.entries(all)) this.put(jid, meta);
  }

  /** baileys' `cachedGroupMetadata`: the cached one, else fetched once and kept. */
  async get(jid: string): Promise<GroupMetadata | undefined> {
    const cached = this.groups.get(jid);
    if (cached) return cached;
    return this.fetch(jid);
  }

  /** WhatsApp said the group changed: fetched again (a send meanwhile waits for this fetch). */
  refresh(jid: string): void {
    this.groups.delete(jid);
    void this.fetch(jid);
  }

  has(jid: string): boolean {
    return this.groups.has(jid);
  }

  private fetch(jid: string): Promise<GroupMetadata | undefined> {
    const running = this.inflight.get(jid);
    if (running) return running;
    const sock = this.socket();
    if (!sock) return Promise.resolve(undefined);
    const work = sock
      .groupMetadata(jid)
      .then((meta) => {
        this.put(jid, meta);
        return meta;
      })
      .catch((error: unknown) => {
        // Undefined lets baileys ask itself: the send still goes out, only uncached.
        this.log.warn("whatsapp: fetching a group's metadata failed", { group: jid, error: String(error) });
        return undefined;
      })
      .finally(() => this.inflight.delete(jid));
    this.inflight.set(jid, work);
    return work;
  }

  private put(jid: string, meta: GroupMetadata): void {
    this.groups.delete(jid);
    this.groups.set(jid, meta);
    while (this.groups.size > MAX_GROUPS) this.groups.delete(this.groups.keys().next().value as string);
  }
}
