/**
 * The channels this build knows: the only module that imports channels. Each entry is a
 * dependency-free probe plus a lazy loader, so an unconfigured channel costs nothing and a broken one
 * cannot stop the others.
 */
import { discordChannel } from "../discord/index.js";
import { feishuChannel } from "../feishu/index.js";
import { imessageChannel } from "../imessage/index.js";
import type { ChannelEntry } from "../messaging/channel/contract.js";
import { slackChannel } from "../slack/index.js";
import { teamsChannel } from "../teams/index.js";
import { telegramChannel } from "../telegram/index.js";
import { webchatChannel } from "../webchat/index.js";
import { webexChannel } from "../webex/index.js";
import { wecomChannel } from "../wecom/index.js";
import { weixinChannel } from "../weixin/index.js";
import { whatsappChannel } from "../whatsapp/index.js";

export const CHANNELS: readonly ChannelEntry[] = [
  webchatChannel,
  telegramChannel,
  discordChannel,
  whatsappChannel,
  slackChannel,
  teamsChannel,
  wecomChannel,
  webexChannel,
  feishuChannel,
  imessageChannel,
  weixinChannel,
];
