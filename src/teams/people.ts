/**
 * Who sent an activity, in the form teams.allowedUsers authorizes. An activity carries the sender's
 * Teams account id and usually their AAD object id; the UPN and e-mail come only from the
 * Connector's member lookup (cached here). The list may name either form, so the form chosen is the
 * one the list actually contains (UPN, then e-mail, then object id: the readable one wins when
 * several match), decided HERE, once per activity, and used for the session key and every card
 * click alike: two spellings of one person would be two sessions, and a click keyed differently
 * from the turn it answers resolves nothing. A stranger is named by the most recognisable form
 * available, for the audit row.
 */
import type { Clock } from "../messaging/base/clock.js";
import type { TeamsMember } from "./client.js";

export interface Sender {
  /** The Teams account id (29:…). */
  id: string;
  aadObjectId?: string;
}

export interface PeopleOptions {
  allowed: ReadonlySet<string>;
  clock: Pick<Clock, "now">;
  /** Member lookups kept (least recently stored dropped first). */
  max?: number;
  ttlMs?: number;
}

interface Looked {
  upn?: string;
  email?: string;
  at: number;
}

const lower = (v: string | undefined) => (v ? v.trim().toLowerCase() : undefined);

export class TeamsPeople {
  private readonly cache = new Map<string, Looked>();
  /** The list names someone by UPN/e-mail: only a lookup can tell whether this sender is them. */
  private readonly namesByUpn: boolean;

  constructor(private readonly o: PeopleOptions) {
    this.namesByUpn = [...o.allowed].some((entry) => entry.includes("@"));
  }

  /**
   * The sender's identity and whether the list names it; null when the member lookup failed and
   * the answer depends on it (the caller denies: an identity guessed now could differ from the one
   * decided for the same person a moment later).
   */
  async resolve(
    sender: Sender,
    lookup: () => Promise<TeamsMember>,
  ): Promise<{ identity: string; authorized: boolean } | null> {
    const aad = lower(sender.aadObjectId);
    const allowed = this.o.allowed;
    // No UPN on the list: an object id decides alone, and a stranger costs no Connector call.
    if (!this.namesByUpn) {
      const identity = aad ?? sender.id;
      return { identity, authorized: aad !== undefined && allowed.has(aad) };
    }
    const looked = await this.member(sender.id, lookup);
    if (!looked) return null;
    for (const form of [looked.upn, looked.email, aad])
      if (form !== undefined && allowed.has(form)) return { identity: form, authorized: true };
    return { identity: looked.upn ?? looked.email ?? aad ?? sender.id, authorized: false };
  }

  private async member(accountId: string, lookup: () => Promise<TeamsMember>): Promise<Looked | null> {
    const now = this.o.clock.now();
    const hit = this.cache.get(accountId);
    if (hit && now - hit.at < (this.o.ttlMs ?? 60 * 60_000)) return hit;
    let m: TeamsMember;
    try {
      m = await lookup();
    } catch {
      return null;
    }
    const upn = lower(m.userPrincipalName);
    const email = lower(m.email);
    const looked: Looked = { at: now, ...(upn ? { upn } : {}), ...(email ? { email } : {}) };
    this.cache.delete(accountId);
    this.cache.set(accountId, looked);
    while (this.cache.size > (this.o.max ?? 1024))
      this.cache.delete(this.cache.keys().next().value as string);
    return looked;
  }
}
