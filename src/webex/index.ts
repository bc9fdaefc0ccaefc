/**
 * Registry entry for Webex: its config section, its secret, and a probe that loads nothing. The bot
 * token comes only from WEBEX_BOT_TOKEN (the environment or $PARLEY_HOME/.env); the three origins are
 * the only places it is sent (hosts.ts decides which hosts those may be).
 */
import { z } from "zod";
import { describeProxy, envProxyFor } from "../messaging/base/env-proxy.js";
import { defineChannel, secretOf } from "../messaging/channel/contract.js";
import { apiOrigin, queueModeSetting } from "../messaging/channel/settings.js";
import { pinProblem } from "./hosts.js";

export const WEBEX_API_URL = "https://webexapis.com/v1";
export const WEBEX_U2C_URL = "https://u2c.wbx2.com/u2c/api/v1";

/** Webex ids are compared lowercased: the platform treats addresses case-insensitively. */
const email = z
  .string()
  .trim()
  .toLowerCase()
  .regex(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, "not an e-mail address");

export const webexSettingsSchema = z.strictObject({
  enabled: z.boolean().optional(),
  apiUrl: apiOrigin(WEBEX_API_URL),
  u2cUrl: apiOrigin(WEBEX_U2C_URL),
  /** A WDM pin; empty means discover through the U2C catalog (never defaulted to one cluster). */
  wdmUrl: z
    .string()
    .trim()
    .transform((url) => url.replace(/\/+$/, ""))
    // A pin is where the device lives: it must be a Webex host, whatever the trusted config says.
    .superRefine((url, ctx) => {
      const problem = url === "" ? null : pinProblem(url);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    })
    .default(""),
  allowedEmails: z.array(email).default([]),
  /** The one person who may arm auto-approve; default the sole allow-listed address. */
  owner: email.optional(),
  /** Spaces are opt-in twice: this switch AND the room's id listed below. */
  allowGroupRooms: z.boolean().default(false),
  allowedRoomIds: z.array(z.string().trim().min(1)).default([]),
  queueMode: queueModeSetting,
});

export type WebexSettings = z.infer<typeof webexSettingsSchema>;

export const webexChannel = defineChannel<WebexSettings>({
  name: "webex",
  docs: "docs/channels/webex.md",
  configSchema: webexSettingsSchema,
  secretEnv: ["WEBEX_BOT_TOKEN"],
  settingEnv: { apiUrl: "WEBEX_API_URL", u2cUrl: "WEBEX_U2C_URL", wdmUrl: "WEBEX_WDM_URL" },
  securityKeys: ["apiUrl", "u2cUrl", "wdmUrl", "allowedEmails", "owner", "allowGroupRooms", "allowedRoomIds"],
  missing: (s, env) => [
    ...(secretOf(env, "WEBEX_BOT_TOKEN") ? [] : ["WEBEX_BOT_TOKEN"]),
    // Deny by default: with nobody listed the bot would answer nobody.
    ...(s.allowedEmails.length > 0 ? [] : ["webex.allowedEmails"]),
  ],
  load: () => import("./start.js"),
  // Settings only (no network, never the token): where the token goes and what start discovers.
  doctor: ({ settings: s, env }) => {
    const proxy = proxyLine(s.apiUrl, env);
    return {
      healthy: proxy.ok,
      lines: [
        `REST base: ${s.apiUrl}`,
        s.wdmUrl
          ? `WDM host: ${hostOf(s.wdmUrl)} (pinned)`
          : `WDM host: discovered at start from the U2C catalog (${hostOf(s.u2cUrl)})`,
        // What really happens: the SDK's rule (getHydraClusterString), never a guessed default.
        "cluster: each conversation URL's host looked up in the U2C host map (read at every connect); a host it does not know is dropped and counted (unknown_cluster)",
        proxy.line,
      ],
    };
  },
});

/** The route to the REST base as HTTPS_PROXY/NO_PROXY decide it (never the proxy's credentials). */
function proxyLine(apiUrl: string, env: Readonly<Record<string, string | undefined>>) {
  try {
    const proxy = envProxyFor(apiUrl, env);
    return {
      ok: true,
      line: proxy ? `proxy: ${describeProxy(proxy)} (HTTPS_PROXY)` : "proxy: none (direct)",
    };
  } catch (error) {
    return { ok: false, line: `proxy: ${error instanceof Error ? error.message : String(error)}` };
  }
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return url;
  }
}

/** The owner as ownerOf() expects it (the allow-list is e-mail addresses here). */
export function webexOwner(s: WebexSettings): string | undefined {
  if (s.owner) return s.allowedEmails.includes(s.owner) ? s.owner : undefined;
  return s.allowedEmails.length === 1 ? s.allowedEmails[0] : undefined;
}
