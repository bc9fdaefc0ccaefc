/**
 * `parley weixin link` and `unlink`. Linking asks iLink for a login QR code, shows it in the
 * terminal and long-polls its status (`wait`, `scaned`, `confirmed`, `expired`; an expired code is
 * replaced, at most three times). Confirmed, the bot token goes to the data home's secrets file as
 * WEIXIN_BOT_TOKEN (owner-only; never config) and the person who scanned is recorded as the owner.
 * A base URL the login names is kept only when it may carry the token (origins.ts); any other
 * refuses the link and stores nothing. Relinking after `-14` is the same command.
 */
import { spawnSync } from "node:child_process";
import type { ChannelCliContext } from "../messaging/channel/contract.js";
import { IlinkClient } from "./client.js";
import {
  clearHealth,
  maskId,
  readLink,
  removeLink,
  removeToken,
  secretsFile,
  storeToken,
  writeLink,
} from "./home.js";
import type { WeixinSettings } from "./index.js";
import { admissibleBaseUrl } from "./origins.js";

export interface LinkOptions {
  fetch?: typeof fetch;
  /** Give up after this long without a confirmed scan (default 5 minutes). */
  timeoutMs?: number;
  /** Draws a QR code in the terminal; null when no renderer is available (the content is printed). */
  renderQr?: (data: string) => string | null;
  now?: () => number;
}

/** How many fresh codes replace an expired one before giving up. */
const MAX_CODES = 3;

/** `qrencode`, when the system has it: parley ships no QR encoder of its own. */
function systemQr(data: string): string | null {
  const run = spawnSync("qrencode", ["-t", "UTF8", "-o", "-", data], { encoding: "utf8", timeout: 5000 });
  return run.status === 0 && run.stdout ? run.stdout : null;
}

export async function linkCommand(
  ctx: ChannelCliContext<WeixinSettings>,
  o: LinkOptions = {},
): Promise<number> {
  if (ctx.args.length > 0) {
    ctx.err("usage: parley weixin link");
    return 2;
  }
  const now = o.now ?? Date.now;
  const client = new IlinkClient({ origin: ctx.settings.apiUrl, ...(o.fetch ? { fetch: o.fetch } : {}) });
  const stop = new AbortController();
  void ctx.stopSignal().then(() => stop.abort());
  const deadline = now() + (o.timeoutMs ?? 5 * 60_000);
  const render = o.renderQr ?? systemQr;
  try {
    for (let code = 1; code <= MAX_CODES; code++) {
      const qr = await client.getBotQrcode();
      if (!qr.qrcode) {
        ctx.err("parley: iLink answered no QR code; try again later.");
        return 1;
      }
      const content = qr.qrcode_img_content || qr.qrcode;
      const drawn = render(content);
      ctx.out(
        drawn
          ? `Scan this with WeChat (Scan in the + menu), then confirm on your phone:\n${drawn}`
          : `Scan this QR code with WeChat, then confirm on your phone. parley draws it with \`qrencode\` when installed; otherwise open or encode this:\n${content}`,
      );
      let scanned = false;
      while (now() < deadline && !stop.signal.aborted) {
        const status = await client.getQrcodeStatus(qr.qrcode, stop.signal);
        if (status.status === "scaned" && !scanned) {
          scanned = true;
          ctx.out("Scanned: confirm the login on your phone.");
        }
        if (status.status === "expired") break;
        if (status.status !== "confirmed") continue;
        return finish(ctx, status);
      }
      if (stop.signal.aborted || now() >= deadline) break;
      ctx.out(code < MAX_CODES ? "The QR code expired; here is a new one." : "The QR code expired.");
    }
  } catch (error) {
    if (!stop.signal.aborted) {
      ctx.err(`parley: linking failed: ${(error as Error).message}`);
      return 1;
    }
  }
  ctx.err("parley: not linked (no confirmed scan in time); run `parley weixin link` again.");
  return 1;
}

function finish(
  ctx: ChannelCliContext<WeixinSettings>,
  status: { bot_token?: string; ilink_bot_id?: string; ilink_user_id?: string; baseurl?: string },
): number {
  const token = status.bot_token ?? "";
  const botId = status.ilink_bot_id ?? "";
  const owner = status.ilink_user_id ?? "";
  if (!token || !botId || !owner) {
    ctx.err("parley: iLink confirmed the scan but sent no token, bot id or user id; nothing stored.");
    return 1;
  }
  let baseUrl: string | undefined;
  if (status.baseurl) {
    const admitted = admissibleBaseUrl(status.baseurl, ctx.settings.apiUrl);
    if (!admitted) {
      // The token would be sent there: refuse the whole link rather than store a token bound to it.
      ctx.err(
        `parley: login named the API origin ${JSON.stringify(status.baseurl.slice(0, 200))}, which is neither https under weixin.qq.com nor weixin.apiUrl; refused, nothing stored.`,
      );
      return 1;
    }
    if (admitted !== ctx.settings.apiUrl) baseUrl = admitted;
  }
  storeToken(ctx.home, token);
  clearHealth(ctx.home);
  writeLink(ctx.home, { botId, ownerUserId: owner, ...(baseUrl ? { baseUrl } : {}), linkedAt: Date.now() });
  ctx.out(
    `✓ Linked bot ${maskId(botId)}; owner ${maskId(owner)}. The token is in ${secretsFile(ctx.home)} (owner-only). Start parley.`,
  );
  return 0;
}

export async function unlinkCommand(ctx: ChannelCliContext<WeixinSettings>): Promise<number> {
  const link = readLink(ctx.home);
  const hadToken = removeToken(ctx.home);
  removeLink(ctx.home);
  ctx.out(
    link || hadToken
      ? `✓ Forgot ${link ? `bot ${maskId(link.botId)}` : "the bot"}; its token left ${secretsFile(ctx.home)}.`
      : "No WeChat bot is linked here.",
  );
  return 0;
}
