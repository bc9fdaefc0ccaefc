/**
 * `parley doctor` for iMessage: the executable and what `imsg status --json` reports (version, rpc
 * methods, advanced features), the host (macOS version, or `supported: false` and why), and whether the Messages
 * database is readable (Full Disk Access). Runs the same argv the channel runs, and stops it by
 * closing its stdin.
 */
import { realClock } from "../messaging/base/clock.js";
import { silentLogger } from "../messaging/base/logger.js";
import type { ChannelDoctorReport } from "../messaging/channel/contract.js";
import { ImsgClient } from "./client.js";
import type { IMessageSettings } from "./index.js";
import { hostPlatform, type PlatformProbe } from "./platform.js";

export interface CheckOptions {
  platform?: PlatformProbe;
  requestTimeoutMs?: number;
}

export async function checkIMessage(
  settings: IMessageSettings,
  o: CheckOptions = {},
): Promise<ChannelDoctorReport> {
  const lines: string[] = [];
  const platform = await (o.platform ?? hostPlatform)(settings.dbPath);
  let healthy = platform.supported;
  if (platform.supported) lines.push(`✓ supported: true (${platform.os})`);
  else lines.push(`✗ supported: false (${platform.reason ?? platform.os})`);
  lines.push(
    platform.dbReadable
      ? `✓ Messages database: ${platform.dbPath} (readable)`
      : `✗ Messages database: ${platform.dbPath} (not readable: grant Full Disk Access to the process running parley)`,
  );
  const client = new ImsgClient({
    cliPath: settings.cliPath,
    dbPath: settings.dbPath,
    clock: realClock,
    logger: silentLogger,
    onNotification: () => {},
    onStarted: async () => {},
    requestTimeoutMs: o.requestTimeoutMs ?? 10_000,
  });
  try {
    const status = await client.start();
    lines.push(`✓ executable: ${settings.cliPath} (imsg ${status.version})`);
    lines.push(
      `- methods: ${status.methods.join(", ") || "(none listed)"}; advanced features (typing, read receipts): ${status.advancedFeatures ? "yes" : "no"}`,
    );
  } catch (error) {
    healthy = false;
    lines.push(
      `✗ executable: ${settings.cliPath} did not answer (${String(error)}); install imsg or set imessage.cliPath`,
    );
  } finally {
    await client.stop();
  }
  lines.push(`- allowed handles: ${settings.allowedHandles.length}; service: ${settings.service}`);
  return { lines, healthy };
}
