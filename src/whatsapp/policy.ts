/**
 * Who may talk to the agent on WhatsApp, as pure decisions. The account is the operator's own, so
 * every rule is deny by default:
 * - one to one, by `whatsapp.dmPolicy`: `self` (only the operator, in their self-chat), `allowlist`
 *   (the numbers in `whatsapp.allowFrom`), `open` (anyone), `disabled` (nobody); any other value
 *   denies everyone;
 * - in a group, only when the group is listed in `whatsapp.groups` (by exact JID: a normalising
 *   compare would let a typo look configured); membership admits a person to the conversation,
 *   never to the machine (commands, tools, approvals and files stay the operator's or, for files,
 *   an individually admitted person's).
 */
import type { WhatsAppSettings } from "./index.js";

export type ChatKind = "self" | "dm" | "group";

export interface Admission {
  dmPolicy: string;
  /** Digits-only E.164 numbers with the plus, as userIds are written. */
  allowFrom: ReadonlySet<string>;
  groups: ReadonlySet<string>;
}

export function admissionOf(s: Pick<WhatsAppSettings, "dmPolicy" | "allowFrom" | "groups">): Admission {
  return { dmPolicy: s.dmPolicy, allowFrom: new Set(s.allowFrom), groups: new Set(Object.keys(s.groups)) };
}

/** A one-to-one message: may it reach the agent? `operator`: the linked account wrote it. */
export function admitsDirect(a: Admission, kind: "self" | "dm", userId: string, operator: boolean): boolean {
  switch (a.dmPolicy) {
    case "self":
      return kind === "self" && operator;
    case "allowlist":
      return kind === "self" ? operator : a.allowFrom.has(userId);
    case "open":
      return kind === "self" ? operator : true;
    default:
      // "disabled", and anything unrecognized: nobody.
      return false;
  }
}

export function admitsGroup(a: Admission, group: string): boolean {
  return a.groups.has(group);
}

/** Whose files a group message may bring in: the operator, or a number the operator listed. */
export function admittedIndividually(a: Admission, userId: string, operator: boolean): boolean {
  return operator || a.allowFrom.has(userId);
}
