/**
 * Who may write to the bot, one to one (iLink links a bot for 1:1 chats only). `allowlist` (the
 * default): `weixin.allowedUserIds` plus the owner; `open`: anyone who writes; `disabled`: nobody.
 * Any other value refuses everyone: a typo must never widen the audience.
 */
export type DmPolicy = "allowlist" | "open" | "disabled";

export function dmPolicyOf(value: string): DmPolicy | "unknown" {
  return value === "allowlist" || value === "open" || value === "disabled" ? value : "unknown";
}

/**
 * The owner: the configured one, else the person who linked the bot (the QR scan), else, as on
 * every channel, the sole allow-listed id (with several listed and none linked or named, nobody).
 */
export function ownerOf(
  configured: string | undefined,
  linkedOwner: string | undefined,
  allowed: readonly string[] = [],
): string | undefined {
  return configured || linkedOwner || (allowed.length === 1 ? allowed[0] : undefined);
}

export class PeerPolicy {
  readonly policy: DmPolicy | "unknown";
  private readonly allowed: ReadonlySet<string>;

  constructor(o: { dmPolicy: string; allowedUserIds: readonly string[]; owner?: string | undefined }) {
    this.policy = dmPolicyOf(o.dmPolicy);
    // Frozen copy: a decision must not change under a concurrent config edit.
    this.allowed = new Set([...o.allowedUserIds, ...(o.owner ? [o.owner] : [])]);
  }

  /** Why `userId` may not write (or be written to); null when admitted. */
  refusal(userId: string): string | null {
    if (userId === "") return "no_sender";
    switch (this.policy) {
      case "open":
        return null;
      case "allowlist":
        return this.allowed.has(userId) ? null : "not_allowlisted";
      case "disabled":
        return "dm_disabled";
      default:
        return "unknown_dm_policy";
    }
  }

  /** The allow-listed ids (with the owner), for configured targets. */
  listed(): string[] {
    return this.policy === "allowlist" || this.policy === "open" ? [...this.allowed] : [];
  }
}
