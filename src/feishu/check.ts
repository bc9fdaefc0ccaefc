/**
 * `parley doctor` for Feishu/Lark: which platform `feishu.domain` names, and whether it answers as
 * this app: a tenant token, then bot/v3/info (the app's name and the bot's open_id). It prints names
 * and ids only; a wrong secret, a domain that is not Feishu and one that cannot be reached each get
 * their own line, since each has a different fix.
 */
import { realClock } from "../messaging/base/clock.js";
import { silentLogger } from "../messaging/base/logger.js";
import type { ChannelDoctorReport, Env } from "../messaging/channel/contract.js";
import { secretOf } from "../messaging/channel/contract.js";
import { redactAll } from "../messaging/security/redact.js";
import { oneLine } from "../messaging/text/clip.js";
import { createClient, createHttp, FeishuRest } from "./client.js";
import { resolveDomain } from "./domain.js";
import { apiErrorOf, isCredentialRejected } from "./errors.js";
import type { FeishuSettings } from "./index.js";

export async function checkFeishu(s: FeishuSettings, env: Env): Promise<ChannelDoctorReport> {
  const domain = resolveDomain(s.domain);
  const where = domain.label === domain.origin ? domain.origin : `${domain.label} (${domain.origin})`;
  const lines = [`✓ feishu: domain ${where}`];
  const client = createClient({
    appId: s.appId ?? "",
    appSecret: secretOf(env, "FEISHU_APP_SECRET"),
    origin: domain.origin,
    http: createHttp(),
    logger: silentLogger,
  });
  // One attempt: doctor reports a rate limit rather than waiting it out.
  const rest = new FeishuRest({ client, clock: realClock, logger: silentLogger, maxAttempts: 1 });
  try {
    const bot = await rest.botInfo();
    lines.push(`✓ feishu: app "${oneLine(bot.appName, 80)}", bot open_id ${bot.openId}`);
    return { healthy: true, lines };
  } catch (error) {
    return { healthy: false, lines: [...lines, `✗ feishu: ${problem(error, where)}`] };
  }
}

function problem(error: unknown, where: string): string {
  const api = apiErrorOf(error);
  if (api && isCredentialRejected(api))
    return `${where} rejected the app id or secret (code ${api.code}: ${oneLine(api.msg, 120)}); check feishu.appId and FEISHU_APP_SECRET`;
  // Not Feishu's envelope (another server at that origin), or one without the bot (no open_id).
  if (api && api.code === -1)
    return `${where} does not answer like Feishu (${api.status ? `HTTP ${api.status}` : oneLine(api.msg, 120)}); check feishu.domain, and that the app has the bot ability`;
  if (api) return `${where} refused bot/v3/info (code ${api.code}: ${oneLine(api.msg, 120)})`;
  const reason = oneLine(
    redactAll((error as { code?: string; message?: string })?.code ?? String(error)),
    160,
  );
  return `${where} could not be reached (${reason}); check feishu.domain and the network`;
}
