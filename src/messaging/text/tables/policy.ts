/** The table presentation policies a capability may declare (tables.ts implements them). */
export type TablePolicyName = "off" | "cards" | "grid" | "native" | "auto";
