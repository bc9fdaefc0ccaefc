/**
 * Registry entry for WhatsApp: the operator's own account, linked as a device (no bot, no Business
 * account). Its credential is not a token in the environment but the linked device's keys in
 * `$PARLEY_HOME/whatsapp/` (a fixed path: see auth-state.ts), so the channel is on once an account
 * is linked (`parley whatsapp link`). Imports no baileys: the probe, doctor's lines and the
 * subcommands read files or load the SDK lazily.
 */
import { z } from "zod";
import type { ChannelDoctorInput, ChannelDoctorReport } from "../messaging/channel/contract.js";
import { defineChannel } from "../messaging/channel/contract.js";
import { queueModeSetting } from "../messaging/channel/settings.js";
import { endingText, readEnded } from "./endings.js";
import {
  hasUnfinishedPairing,
  loosePermissions,
  maskedNumber,
  readLinkedAccount,
  whatsappDir,
} from "./home.js";

/** baileys' own default: the WhatsApp Web socket. */
export const WHATSAPP_WS_URL = "wss://web.whatsapp.com/ws/chat";

/** E.164: a plus, a country code, at most 15 digits. Anything else can never match a sender. */
const E164 = /^\+[1-9][0-9]{6,14}$/;
/** A group JID as WhatsApp writes it (`<digits>@g.us`, older ones `<creator>-<time>@g.us`). */
const GROUP_JID = /^[0-9]{5,40}(?:-[0-9]{5,20})?@g\.us$/;

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

function encryptedOrLoopback(url: string): boolean {
  try {
    const u = new URL(url);
    return u.protocol === "wss:" || LOOPBACK_HOSTS.has(u.hostname);
  } catch {
    return false;
  }
}

const groupSettings = z.strictObject({
  /** mention: answer only when the account is mentioned or replied to; rules: read every message. */
  mode: z.enum(["mention", "rules"]).default("mention"),
  /** Told to the agent on every turn in rules mode: when to speak, when to stay silent. */
  rules: z.string().trim().max(2000).optional(),
  /** After the agent spoke unprompted, this long before it may do so again. */
  cooldownSeconds: z.number().int().min(0).max(86_400).default(120),
});

export const whatsappSettingsSchema = z.strictObject({
  enabled: z.boolean().optional(),
  /** baileys' socket URL (WhatsApp's by default); media is fetched from hosts derived from it. */
  webSocketUrl: z
    .string()
    .trim()
    .regex(/^wss?:\/\/[^\s]+$/, "not a ws(s) URL")
    // Media comes from the same host, over HTTPS: plain ws:// would carry it in the clear.
    .refine(encryptedOrLoopback, "ws:// only on loopback (127.0.0.1, localhost, [::1]); use wss://")
    .default(WHATSAPP_WS_URL),
  /** An HTTP(S) proxy for the socket and for media, both ways. */
  proxyUrl: z
    .string()
    .trim()
    .regex(/^https?:\/\/[^\s]+$/, "not an http(s) URL")
    .optional(),
  /**
   * The WhatsApp Web version the socket announces: "latest" asks WhatsApp Web at start (baileys'
   * built-in one when that fails), "pinned" is baileys' built-in one, or a version ("2.3000.1234567890").
   */
  webVersion: z
    .string()
    .trim()
    .regex(
      /^(latest|pinned|\d{1,4}\.\d{1,6}\.\d{1,12})$/,
      'not "latest", "pinned" or a version like 2.3000.1234567890',
    )
    .default("latest"),
  /** Who may write to the agent one to one: the linked account only (self), a list, anyone, nobody. */
  dmPolicy: z.enum(["self", "allowlist", "open", "disabled"]).default("self"),
  /** Phone numbers (E.164) admitted under dmPolicy "allowlist"; in groups, whose files are read. */
  allowFrom: z.array(z.string().trim().regex(E164, "not an E.164 phone number (+4917012345678)")).default([]),
  /** The groups the agent takes part in, by JID; any other group is invisible. */
  groups: z.record(z.string().regex(GROUP_JID, "not a WhatsApp group JID"), groupSettings).default({}),
  /** Messages delivered after a reconnect are answered only when sent within this many minutes. */
  maxCatchUpMinutes: z
    .number()
    .int()
    .min(0)
    .max(7 * 24 * 60)
    .default(15),
  queueMode: queueModeSetting,
  /** unified: the operator's self-chat shares one session with their other channels. */
  dmScope: z
    .enum(["per-channel-peer", "per-peer", "unified"])
    .default("per-channel-peer")
    .transform((v) => (v === "unified" ? "unified" : "per-channel-peer")),
});

export type WhatsAppSettings = z.infer<typeof whatsappSettingsSchema>;
export type WhatsAppGroupSettings = WhatsAppSettings["groups"][string];

const LINK_HINT = "a linked WhatsApp account (run `parley whatsapp link`)";

/** A proxy URL as doctor shows it: never its user or password. */
function withoutCredentials(url: string): string {
  try {
    const u = new URL(url);
    const path = u.pathname === "/" ? "" : u.pathname;
    // Written by hand: URL would percent-encode the mask.
    return `${u.protocol}//${u.username || u.password ? "•••@" : ""}${u.host}${path}`;
  } catch {
    return "(unparseable)";
  }
}

export function whatsappDoctor({
  settings,
  home,
}: ChannelDoctorInput<WhatsAppSettings>): ChannelDoctorReport {
  const lines: string[] = [];
  let healthy = true;
  const ws =
    settings.webSocketUrl === WHATSAPP_WS_URL ? `${WHATSAPP_WS_URL} (WhatsApp's)` : settings.webSocketUrl;
  lines.push(`origin: ${ws}`);
  lines.push(`proxy: ${settings.proxyUrl ? withoutCredentials(settings.proxyUrl) : "none"}`);
  lines.push(
    `web version: ${settings.webVersion === "latest" ? "asked of WhatsApp Web at start (baileys' built-in one if that fails)" : settings.webVersion === "pinned" ? "baileys' built-in one" : settings.webVersion}`,
  );
  const account = readLinkedAccount(home);
  // What ended the last connection for good, as the connection wrote it (gone once one opens).
  const ended = readEnded(home);
  if (account && ended?.ending !== "logged_out") lines.push(`✓ linked account: ${maskedNumber(account.id)}`);
  else if (account) lines.push(`✗ linked account: ${maskedNumber(account.id)}, logged out`);
  else {
    healthy = false;
    lines.push(
      hasUnfinishedPairing(home)
        ? "✗ not linked: an earlier `parley whatsapp link` did not finish; run it again"
        : `✗ not linked: run \`parley whatsapp link\` (keys go to ${whatsappDir(home)})`,
    );
  }
  if (ended) {
    healthy = false;
    lines.push(`✗ stopped ${ended.at}: ${endingText(ended.ending, ended.version)}`);
  }
  const loose = loosePermissions(home);
  if (loose.length === 0) lines.push(`✓ permissions: ${whatsappDir(home)} is owner-only`);
  else {
    healthy = false;
    for (const p of loose)
      lines.push(
        `✗ permissions: ${p.path} is 0${p.mode.toString(8)}; the linked device's keys must be owner-only ` +
          "(`parley start` tightens it, or chmod -R go-rwx it)",
      );
  }
  const groups = Object.keys(settings.groups).length;
  lines.push(
    `direct messages: ${settings.dmPolicy}${settings.dmPolicy === "allowlist" ? ` (${settings.allowFrom.length} number(s))` : ""}; groups: ${groups}`,
  );
  return { lines, healthy };
}

export const whatsappChannel = defineChannel<WhatsAppSettings>({
  name: "whatsapp",
  docs: "docs/channels/whatsapp.md",
  configSchema: whatsappSettingsSchema,
  // No token: the linked device's keys in the data home are the credential.
  secretEnv: [],
  settingEnv: {
    webSocketUrl: "WHATSAPP_WS_URL",
    proxyUrl: "WHATSAPP_PROXY_URL",
    webVersion: "WHATSAPP_WEB_VERSION",
  },
  securityKeys: ["webSocketUrl", "proxyUrl", "dmPolicy", "allowFrom", "groups"],
  credentialsInHome: (home) => readLinkedAccount(home) !== null,
  missing: (_s, _env, home) => (home !== undefined && readLinkedAccount(home) ? [] : [LINK_HINT]),
  doctor: whatsappDoctor,
  cli: {
    link: {
      usage: "link [--phone +4917012345678]",
      help: "Link your WhatsApp account as a device of this parley: scan the QR code it prints (WhatsApp → Linked devices), or with --phone enter the pairing code it shows.",
      run: async (ctx) => (await import("./link.js")).linkCommand(ctx),
    },
    unlink: {
      usage: "unlink",
      help: "Log this parley out of WhatsApp and delete the linked device's keys. Stop parley first.",
      run: async (ctx) => (await import("./link.js")).unlinkCommand(ctx),
    },
  },
  load: () => import("./start.js"),
});
