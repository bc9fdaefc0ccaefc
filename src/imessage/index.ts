/**
 * Registry entry for iMessage: the operator's own Apple account on the Mac parley runs on, driven
 * through the `imsg` executable (newline-delimited JSON-RPC over its stdio). No credential and no
 * network origin: the executable is the trust boundary, so `cliPath` and `dbPath` are security keys
 * (trusted configuration only) and refuse line breaks and NUL (they become a child's argv). The
 * channel is opt-in: with no credential to signal intent, it stays off until its section exists.
 */
import { z } from "zod";
import { defineChannel } from "../messaging/channel/contract.js";
import { queueModeSetting } from "../messaging/channel/settings.js";
import { normalizeHandle } from "./handles.js";

/** The services `send` takes; one constant for the schema and the wire. */
export const IMESSAGE_SERVICES = ["imessage", "sms", "auto"] as const;
export const DEFAULT_CLI_PATH = "imsg";

/** A path that becomes argv: a line break or NUL would corrupt the argument rather than be quoted. */
const argvPath = z
  .string()
  .trim()
  .min(1)
  .refine((p) => !/[\r\n\0]/.test(p), "line breaks and NUL are refused (the path becomes a child's argv)");

const handle = z.string().transform((raw, ctx) => {
  const normal = normalizeHandle(raw);
  if (normal === null) {
    ctx.addIssue({ code: "custom", message: "not an iMessage handle (an email or a phone number)" });
    return z.NEVER;
  }
  return normal;
});

export const imessageSettingsSchema = z.strictObject({
  enabled: z.boolean().optional(),
  /** The imsg executable (a name on PATH or a path); spawned with `rpc`, never through a shell. */
  cliPath: argvPath.default(DEFAULT_CLI_PATH),
  /** The Messages database imsg reads (its own default when unset); checked for Full Disk Access. */
  dbPath: argvPath.optional(),
  /** Deny by default: an empty list answers nobody. Normalized (email lowercase, phone digits and +). */
  allowedHandles: z.array(handle).default([]),
  /** The one handle that may arm auto-approve; default the sole allow-listed handle. */
  owner: handle.optional(),
  service: z.enum(IMESSAGE_SERVICES).default("auto"),
  queueMode: queueModeSetting,
  /**
   * Deprecated, no effect: real imsg has no subscription bound (its watch reads the database from a
   * cursor, steipete/imsg Sources/IMsgCore/MessageWatcher.swift). Still accepted so an existing
   * config keeps loading; the channel warns at start.
   */
  bufferLimit: z.number().int().optional(),
});

export type IMessageSettings = z.infer<typeof imessageSettingsSchema>;

const missingIMessage = (s: IMessageSettings): string[] =>
  // The transport fails closed on an empty allow-list, so starting it would answer nobody.
  s.allowedHandles.length > 0 ? [] : ["imessage.allowedHandles"];

export const imessageChannel = defineChannel<IMessageSettings>({
  name: "imessage",
  docs: "docs/channels/imessage.md",
  configSchema: imessageSettingsSchema,
  secretEnv: [],
  settingEnv: { cliPath: "IMESSAGE_CLI_PATH", dbPath: "IMESSAGE_DB_PATH" },
  securityKeys: ["cliPath", "dbPath", "allowedHandles", "owner"],
  optIn: "add an imessage section to enable (it drives your own Messages account)",
  missing: missingIMessage,
  load: () => import("./start.js"),
  doctor: async ({ settings }) => (await import("./check.js")).checkIMessage(settings),
});
