/**
 * Registry entry for the web chat: on by default (it needs no token, and it is the zero-config
 * start), loopback unless the operator asks otherwise. Loaded lazily like every channel.
 */
import { z } from "zod";
import { defineChannel } from "../messaging/channel/contract.js";
import { DEFAULT_WEBCHAT_LIMITS } from "./limits.js";

export const webchatSettingsSchema = z.strictObject({
  enabled: z.boolean().default(true),
  host: z.string().trim().min(1).default("127.0.0.1"),
  port: z.number().int().min(0).max(65535).default(8787),
  /** Binding a non-loopback host must be asked for explicitly. */
  allowRemote: z.boolean().default(false),
  /** Origins besides the page's own a socket may come from (a reverse proxy's public origin). */
  allowedOrigins: z
    .array(z.string().regex(/^https?:\/\/[^\s/]+$/, "not an origin (scheme://host[:port])"))
    .default([]),
  maxSockets: z.number().int().min(1).max(10_000).default(DEFAULT_WEBCHAT_LIMITS.maxSockets),
  maxSocketsPerConversation: z
    .number()
    .int()
    .min(1)
    .max(1000)
    .default(DEFAULT_WEBCHAT_LIMITS.maxSocketsPerConversation),
  frameBurst: z.number().int().min(1).max(10_000).default(DEFAULT_WEBCHAT_LIMITS.frameBurst),
  framesPerSecond: z.number().min(0.1).max(1000).default(DEFAULT_WEBCHAT_LIMITS.framesPerSecond),
  /** A conversation with no page open for this long is dropped from memory (its history is the store's). */
  idleConversationMinutes: z
    .number()
    .min(1)
    .max(7 * 24 * 60)
    .default(60),
});

export type WebChatSettings = z.infer<typeof webchatSettingsSchema>;

export const webchatChannel = defineChannel<WebChatSettings>({
  name: "webchat",
  docs: "docs/channels/webchat.md",
  configSchema: webchatSettingsSchema,
  secretEnv: [],
  // Who can reach the page is decided by where it listens.
  securityKeys: ["host", "allowRemote", "allowedOrigins"],
  missing: () => [],
  load: () => import("./start.js"),
});
