/**
 * Registry entry for the web chat: on by default (it needs no token, and it is the zero-config
 * start), loopback unless the operator asks otherwise. Loaded lazily like every channel.
 */
import { z } from "zod";
import { defineChannel } from "../messaging/channel/contract.js";

export const webchatSettingsSchema = z.strictObject({
  enabled: z.boolean().default(true),
  host: z.string().trim().min(1).default("127.0.0.1"),
  port: z.number().int().min(0).max(65535).default(8787),
  /** Binding a non-loopback host must be asked for explicitly. */
  allowRemote: z.boolean().default(false),
});

export type WebChatSettings = z.infer<typeof webchatSettingsSchema>;

export const webchatChannel = defineChannel<WebChatSettings>({
  name: "webchat",
  docs: "docs/channels/webchat.md",
  configSchema: webchatSettingsSchema,
  secretEnv: [],
  // Who can reach the page is decided by where it listens.
  securityKeys: ["host", "allowRemote"],
  missing: () => [],
  load: () => import("./start.js"),
});
