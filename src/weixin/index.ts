/**
 * Registry entry for Weixin (WeChat) over Tencent's iLink bot API: its config section, its secret,
 * the link CLI and doctor's lines, none of which loads the channel. The bot token comes only from
 * WEIXIN_BOT_TOKEN, which `parley weixin link` writes to the data home's secrets file; it is sent
 * to `weixin.apiUrl` (or the admitted base URL login named) and nowhere else.
 */
import { z } from "zod";
import type { ChannelDoctorInput, ChannelDoctorReport, Env } from "../messaging/channel/contract.js";
import { defineChannel, secretOf } from "../messaging/channel/contract.js";
import { apiOrigin, idList } from "../messaging/channel/settings.js";
import { maskId, readHealth, readLink, TOKEN_ENV } from "./home.js";
import { dmPolicyOf, ownerOf } from "./policy.js";

export const WEIXIN_API_URL = "https://ilinkai.weixin.qq.com";
export const WEIXIN_CDN_URL = "https://novac2c.cdn.weixin.qq.com/c2c";
/** An iLink user id (`…@im.wechat`): anything else can never match a sender. */
export const WEIXIN_USER_ID = /^[A-Za-z0-9._-]{1,128}@im\.wechat$/;

export const weixinSettingsSchema = z.strictObject({
  enabled: z.boolean().optional(),
  /** The API origin: every call, and the token, go here. */
  apiUrl: apiOrigin(WEIXIN_API_URL),
  /** The CDN origin inbound media is fetched from (no token is ever sent there). */
  cdnUrl: apiOrigin(WEIXIN_CDN_URL),
  /** allowlist | open | disabled; any other value refuses everyone (checked by the transport). */
  dmPolicy: z.string().trim().default("allowlist"),
  allowedUserIds: idList(WEIXIN_USER_ID, "iLink user id (…@im.wechat)"),
  /** Who may arm /yolo; default the person who linked the bot. */
  owner: z.string().trim().regex(WEIXIN_USER_ID, "not an iLink user id (…@im.wechat)").optional(),
  /** After `-14` (session expired), every call waits this long. */
  sessionPauseMinutes: z
    .number()
    .int()
    .min(1)
    .max(24 * 60)
    .default(60),
});

export type WeixinSettings = z.infer<typeof weixinSettingsSchema>;

const LINK_HINT = `${TOKEN_ENV} (run \`parley weixin link\`)`;

export function missingWeixin(s: WeixinSettings, env: Env, home?: string): string[] {
  const owner = ownerOf(s.owner, home ? readLink(home)?.ownerUserId : undefined);
  return [
    ...(secretOf(env, TOKEN_ENV) ? [] : [LINK_HINT]),
    // An allow-list with nobody on it (not even an owner) would answer nobody.
    ...(dmPolicyOf(s.dmPolicy) === "allowlist" && s.allowedUserIds.length === 0 && !owner
      ? ["weixin.allowedUserIds (or link the bot: its scanner is the owner)"]
      : []),
  ];
}

export function weixinDoctor({
  settings: s,
  env,
  home,
}: ChannelDoctorInput<WeixinSettings>): ChannelDoctorReport {
  const lines: string[] = [];
  let healthy = true;
  const link = readLink(home);
  lines.push(`origin: ${s.apiUrl}${s.apiUrl === WEIXIN_API_URL ? " (iLink's)" : ""}; media: ${s.cdnUrl}`);
  if (link?.baseUrl && link.baseUrl !== s.apiUrl) lines.push(`login named the API origin ${link.baseUrl}`);
  if (link) {
    lines.push(`✓ linked bot: ${maskId(link.botId)}; owner: ${maskId(s.owner ?? link.ownerUserId)}`);
  } else {
    healthy = false;
    lines.push("✗ not linked: run `parley weixin link` and scan the QR code with WeChat");
  }
  if (!secretOf(env, TOKEN_ENV)) {
    healthy = false;
    lines.push(`✗ ${TOKEN_ENV} is not set (\`parley weixin link\` writes it to $PARLEY_HOME/.env)`);
  }
  const health = readHealth(home);
  if (health && health.pausedUntil > Date.now()) {
    healthy = false;
    lines.push(
      `✗ session paused after -14 (expired) until ${new Date(health.pausedUntil).toISOString()}: relink may be needed (\`parley weixin link\`)`,
    );
  } else lines.push("✓ session: not paused");
  const policy = dmPolicyOf(s.dmPolicy);
  if (policy === "unknown") {
    healthy = false;
    lines.push(`✗ weixin.dmPolicy "${s.dmPolicy}" is not allowlist, open or disabled: everyone is refused`);
  } else
    lines.push(
      `direct messages: ${policy}${policy === "allowlist" ? ` (${s.allowedUserIds.length} id(s) plus the owner)` : ""}`,
    );
  return { lines, healthy };
}

export const weixinChannel = defineChannel<WeixinSettings>({
  name: "weixin",
  docs: "docs/channels/weixin.md",
  configSchema: weixinSettingsSchema,
  secretEnv: [TOKEN_ENV],
  settingEnv: { apiUrl: "WEIXIN_API_URL", cdnUrl: "WEIXIN_CDN_URL" },
  securityKeys: ["apiUrl", "cdnUrl", "dmPolicy", "allowedUserIds", "owner"],
  missing: missingWeixin,
  doctor: weixinDoctor,
  cli: {
    link: {
      usage: "link",
      help: "Link a WeChat bot by QR code: scan it with WeChat; the token goes to $PARLEY_HOME/.env and the scanner becomes the owner.",
      run: async (ctx) => (await import("./link.js")).linkCommand(ctx),
    },
    unlink: {
      usage: "unlink",
      help: "Forget the linked WeChat bot: its token leaves $PARLEY_HOME/.env. Stop parley first.",
      run: async (ctx) => (await import("./link.js")).unlinkCommand(ctx),
    },
  },
  load: () => import("./start.js"),
});
