/**
 * Registry entry for Microsoft Teams: its config section, its credentials, what `parley doctor`
 * shows of it (where each credential may go), `parley teams manifest`, and a probe that imports no
 * botbuilder. The app id, password and tenant come only from MICROSOFT_APP_ID,
 * MICROSOFT_APP_PASSWORD and MICROSOFT_APP_TENANT_ID (the environment or $PARLEY_HOME/.env).
 */
import { z } from "zod";
import type { Env } from "../messaging/channel/contract.js";
import { defineChannel, secretOf } from "../messaging/channel/contract.js";
import { queueModeSetting } from "../messaging/channel/settings.js";
import { teamsManifest } from "./commands.js";

export const TEAMS_LOGIN_URL = "https://login.microsoftonline.com";
export const TEAMS_OPENID_METADATA_URL = "https://login.botframework.com/v1/.well-known/openidconfiguration";
export const TEAMS_TOKEN_ISSUER = "https://api.botframework.com";
/** Where the commercial cloud's Connector lives; a government cloud's hosts are configured. */
export const TEAMS_CONNECTOR_HOSTS: readonly string[] = ["smba.trafficmanager.net"];
/** The multi-tenant authority's tenant: an app registered for any organisation. */
export const MULTI_TENANT = "botframework.com";

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** A UPN or e-mail address: one @, no spaces (Azure AD compares them case-insensitively). */
const UPN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const HOST = /^[a-z0-9.-]+(?::\d{1,5})?$/;

/** An identity the allow-list can name: an AAD object id or a UPN/e-mail, lowercased. */
const identity = z
  .string()
  .trim()
  .toLowerCase()
  .refine((v) => GUID.test(v) || UPN.test(v), "not a UPN/e-mail address nor an AAD object id");

/** Production gets no plain-http escape hatch: a credential or a key set never travels in clear. */
const httpsUrl = (fallback: string) =>
  z
    .string()
    .trim()
    .regex(/^https:\/\/[^\s]+$/, "not an https URL")
    .transform((url) => url.replace(/\/+$/, ""))
    .default(fallback);

/** host[:port] entries, from a list or from TEAMS_CONNECTOR_HOSTS's comma-separated form. */
const connectorHosts = z
  .union([z.array(z.string()), z.string()])
  .transform((v) =>
    (typeof v === "string" ? v.split(",") : v).map((h) => h.trim().toLowerCase()).filter(Boolean),
  )
  .pipe(z.array(z.string().regex(HOST, "not a host or host:port")).min(1, "name at least one Connector host"))
  .default([...TEAMS_CONNECTOR_HOSTS]);

const listen = z
  .string()
  .trim()
  .regex(/^[^\s:]+:\d{1,5}$/, "not host:port")
  .refine((v) => Number(v.slice(v.lastIndexOf(":") + 1)) <= 65535, "port above 65535")
  .default("127.0.0.1:3978");

export const teamsSettingsSchema = z.strictObject({
  enabled: z.boolean().optional(),
  /** MultiTenant (any organisation's users reach the app) or SingleTenant (MICROSOFT_APP_TENANT_ID). */
  appType: z.enum(["MultiTenant", "SingleTenant"]).default("MultiTenant"),
  /** Where /api/messages is served (plain HTTP: the public HTTPS endpoint is a proxy in front of it). */
  listen,
  /** The login origin: the app password is sent there and nowhere else. */
  loginUrl: httpsUrl(TEAMS_LOGIN_URL),
  /** Where inbound tokens' signing keys are published. */
  openIdMetadataUrl: httpsUrl(TEAMS_OPENID_METADATA_URL),
  /** The issuer an inbound token must name. */
  tokenIssuer: z.string().trim().min(1).default(TEAMS_TOKEN_ISSUER),
  /** Hosts an activity's serviceUrl may name: the only places a Connector token is sent. */
  connectorHosts,
  /** Deny by default: UPNs/e-mail addresses or AAD object ids. */
  allowedUsers: z.array(identity).default([]),
  /** The one user who may arm auto-approve; default the sole allow-listed identity. */
  owner: identity.optional(),
  /** Turns running at once past which new messages are shed (card clicks and /stop never are). */
  maxInflightTurns: z.number().int().min(1).max(1000).default(8),
  queueMode: queueModeSetting,
});

export type TeamsSettings = z.infer<typeof teamsSettingsSchema>;

/** The authority the app's password is presented to. */
export function teamsAuthority(s: Pick<TeamsSettings, "loginUrl" | "appType">, env: Env): string {
  const tenant = s.appType === "SingleTenant" ? secretOf(env, "MICROSOFT_APP_TENANT_ID") : MULTI_TENANT;
  return `${s.loginUrl}/${tenant || MULTI_TENANT}`;
}

export const teamsChannel = defineChannel<TeamsSettings>({
  name: "teams",
  docs: "docs/channels/teams.md",
  configSchema: teamsSettingsSchema,
  secretEnv: ["MICROSOFT_APP_ID", "MICROSOFT_APP_PASSWORD", "MICROSOFT_APP_TENANT_ID"],
  settingEnv: {
    loginUrl: "TEAMS_LOGIN_URL",
    openIdMetadataUrl: "TEAMS_OPENID_METADATA_URL",
    connectorHosts: "TEAMS_CONNECTOR_HOSTS",
  },
  securityKeys: [
    "appType",
    "listen",
    "loginUrl",
    "openIdMetadataUrl",
    "tokenIssuer",
    "connectorHosts",
    "allowedUsers",
    "owner",
  ],
  missing: (s, env) => [
    ...(secretOf(env, "MICROSOFT_APP_ID") ? [] : ["MICROSOFT_APP_ID"]),
    // Without a password the SDK would skip inbound authentication altogether: never start so.
    ...(secretOf(env, "MICROSOFT_APP_PASSWORD") ? [] : ["MICROSOFT_APP_PASSWORD"]),
    ...(s.appType === "SingleTenant" && !secretOf(env, "MICROSOFT_APP_TENANT_ID")
      ? ["MICROSOFT_APP_TENANT_ID"]
      : []),
    // The transport fails closed on an empty allow-list, so starting it would answer nobody.
    ...(s.allowedUsers.length > 0 ? [] : ["teams.allowedUsers"]),
  ],
  doctor: ({ settings: s, env }) => ({
    healthy: true,
    lines: [
      `messaging endpoint: http://${s.listen}/api/messages (serve it to Azure over HTTPS)`,
      `app password sent only to: ${teamsAuthority(s, env)}/oauth2/v2.0/token`,
      `inbound tokens: keys from ${s.openIdMetadataUrl}, issuer ${s.tokenIssuer}`,
      `Connector tokens sent only to serviceUrl hosts: ${s.connectorHosts.join(", ")}`,
      `allowed users: ${s.allowedUsers.length}`,
    ],
  }),
  cli: {
    manifest: {
      usage: "manifest",
      help: "print the Teams app manifest (personal scope, files, the command list) for MICROSOFT_APP_ID",
      readsSettingsOnly: true,
      run: async ({ env, out, err }) => {
        const appId = secretOf(env, "MICROSOFT_APP_ID");
        if (!appId) {
          err("parley teams manifest: set MICROSOFT_APP_ID first (the manifest names the bot by it)");
          return 2;
        }
        out(JSON.stringify(teamsManifest(appId), null, 2));
        return 0;
      },
    },
  },
  load: () => import("./start.js"),
});
