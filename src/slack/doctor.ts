/**
 * `parley doctor` for Slack: where every call goes (the origin), the mode and what it still needs,
 * then the platform's own answer (auth.test: the workspace, the bot, and the scopes the bot token
 * was granted, against the ones parley's calls need). Loaded lazily with the SDK; never prints a
 * token. A token Slack refuses, or a missing scope, makes doctor fail.
 */

import { silentLogger } from "../messaging/base/logger.js";
import type { ChannelDoctorReport, Env } from "../messaging/channel/contract.js";
import { secretOf } from "../messaging/channel/contract.js";
import { SlackClient } from "./client.js";
import type { SlackSettings } from "./index.js";
import { REQUIRED_SCOPES } from "./manifest.js";

export interface SlackDoctorOptions {
  /** Injected for tests; the global fetch otherwise. */
  fetch?: typeof fetch;
}

export async function slackDoctor(
  s: SlackSettings,
  env: Env,
  o: SlackDoctorOptions = {},
): Promise<ChannelDoctorReport> {
  const lines = [
    `origin: ${s.apiUrl} (every Slack token goes here and nowhere else)`,
    `mode: ${s.mode === "socket" ? "socket (Socket Mode, SLACK_APP_TOKEN)" : `http (Events API on ${s.listen}/slack/events, SLACK_SIGNING_SECRET)`}`,
  ];
  let healthy = true;
  if (s.mode === "socket" && !secretOf(env, "SLACK_APP_TOKEN")) {
    lines.push("✗ socket mode needs SLACK_APP_TOKEN (an xapp- app-level token with connections:write)");
    healthy = false;
  }
  const token = secretOf(env, "SLACK_BOT_TOKEN");
  if (!token)
    return { lines: [...lines, "- team and bot: unknown until SLACK_BOT_TOKEN is set"], healthy: false };
  const client = new SlackClient({
    token,
    apiUrl: s.apiUrl,
    logger: silentLogger,
    retry: { retries: 0 },
    timeoutMs: 10_000,
    ...(o.fetch ? { fetch: o.fetch } : {}),
  });
  try {
    const me = await client.verify();
    lines.push(`✓ team: ${me.teamId}${me.team ? ` (${me.team})` : ""}`);
    lines.push(`✓ bot: ${me.botUserId}${me.botName ? ` (@${me.botName})` : ""}`);
    const missing = REQUIRED_SCOPES.filter((scope) => !me.scopes.includes(scope));
    if (missing.length === 0) lines.push(`✓ scopes: all ${REQUIRED_SCOPES.length} granted`);
    else {
      healthy = false;
      lines.push(`✗ missing scopes: ${missing.join(", ")} (add them to the app, then reinstall it)`);
    }
  } catch (error) {
    healthy = false;
    const code = (error as { data?: { error?: unknown } }).data?.error;
    lines.push(
      `✗ auth.test failed: ${typeof code === "string" ? code : error instanceof Error ? error.name : "error"}`,
    );
  }
  return { lines, healthy };
}
