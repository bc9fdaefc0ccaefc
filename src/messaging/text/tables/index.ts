/**
 * Per-target Markdown table rendering. A GFM pipe table is unreadable on a channel that renders
 * Markdown but not tables — the pipes arrive literally and every column wraps — so a renderer
 * converts the bytes it is about to send into something the target can show. Pure and
 * dependency-free.
 *
 * Outbound-only: this never runs on the canonical turn text (history, transcript, dashboard), only
 * on a renderer's outgoing copy, and the policy is per delivery TARGET, never per session — one
 * turn mirrored to two channels can keep pipes on one and get cards on the other.
 *
 * Policies: off (no conversion — the floor), cards (one card per row), grid (an aligned monospace
 * grid in a code fence), native (the target renders tables itself — only when it really does),
 * auto (per table: a grid while it fits GRID_MAX_DISPLAY_COLUMNS, cards once it does not).
 *
 * Conservative: anything not unambiguously a GFM table stays byte-for-byte — prose, pipe-bearing
 * sentences, 4-column-indented code, malformed shapes, block starters, fenced code and raw HTML.
 * Idempotent: neither rendering contains a table run, so a streaming renderer may convert its buffer
 * eagerly and re-convert what it retains. Pinned by test/messaging/tables.test.ts and the parity
 * records in test/messaging/tables.parity.test.ts.
 */
import { GRID_MAX_DISPLAY_COLUMNS, type GridFits, type RenderResult, renderWithMode } from "./core.js";
import { pyStrip } from "./scan.js";

export { displayWidth } from "./width.js";
export type { GridFits, RenderResult };
export { GRID_MAX_DISPLAY_COLUMNS };

export const TABLE_POLICIES = ["off", "cards", "grid", "native", "auto"] as const;
export type TablePolicy = (typeof TABLE_POLICIES)[number];

interface RenderTablesOptions {
  /** The target's declared policy; resolved against nativeTables before use. */
  readonly policy: TablePolicy | string | null;
  /** The target renders a GFM pipe table AS a table (checked before native may pass through). */
  readonly nativeTables?: boolean;
  /** False while streaming: a run that may still be growing is left raw. Default true. */
  readonly final?: boolean;
  /**
   * Whether a grid fits one message of the target. A grid that does not is shown as cards, or,
   * when no card can show the run, left raw and reported in `rawRuns`. Absent: grids are kept.
   */
  readonly fits?: GridFits;
}

/**
 * Canonical policy name. Anything unrecognised (including null) becomes auto, not off: off is the
 * fallback that ships raw pipes, the one output this module exists to prevent.
 */
export function normalizeTablePolicy(policy: unknown): TablePolicy {
  const name = typeof policy === "string" ? pyStrip(policy).toLowerCase() : "";
  return (TABLE_POLICIES as readonly string[]).includes(name) ? (name as TablePolicy) : "auto";
}

/**
 * The capability check. native on a target without native tables becomes cards, never raw pipes;
 * auto on a native target becomes off (the platform's own table beats anything rendered here);
 * explicit cards/grid are operator intent and are honoured on any target.
 */
export function resolveTablePolicy(
  policy: string | null | undefined,
  opts: { nativeTables?: boolean } = {},
): TablePolicy {
  const name = normalizeTablePolicy(policy);
  const native = opts.nativeTables === true;
  if (name === "native") return native ? "native" : "cards";
  if (name === "auto" && native) return "off";
  return name;
}

/** Render every table run in `text` per the resolved policy, reporting whether a grid was emitted. */
export function renderTablesWithMetadata(text: string, opts: RenderTablesOptions): RenderResult {
  const policy = resolveTablePolicy(opts.policy, { nativeTables: opts.nativeTables === true });
  // off and supported-native are byte-identical passthroughs.
  if (policy === "off" || policy === "native") return { text, generatedGrid: false };
  return renderWithMode(text, policy, opts.final !== false, opts.fits);
}

/** Render every table run in `text` per the resolved policy. */
export function renderTables(text: string, opts: RenderTablesOptions): string {
  return renderTablesWithMetadata(text, opts).text;
}
