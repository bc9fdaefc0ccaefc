/**
 * `parley doctor`: what the gateway would do with this config and environment, per channel, and
 * the state of its store (path, schema version, size, a full integrity check, messages accepted but
 * not yet answered), without starting anything and without ever printing a secret (only setting
 * NAMES appear).
 */
import type { ChannelEntry } from "../messaging/channel/contract.js";
import { probeChannel } from "../messaging/channel/contract.js";
import type { LoadedConfig } from "./config.js";
import { findExecutable } from "./executable.js";
import { resolveAgent } from "./gateway.js";
import { checkHome } from "./home-checks.js";
import { processIsAlive } from "./home-lock.js";
import { CHANNELS } from "./registry.js";
import { storeReport, storeReportLines } from "./store-report.js";

export interface DoctorReport {
  lines: string[];
  healthy: boolean;
}

export async function doctor(
  loaded: LoadedConfig,
  channels: readonly ChannelEntry[] = CHANNELS,
  nowMs: number = Date.now(),
): Promise<DoctorReport> {
  const lines: string[] = [];
  let healthy = true;
  lines.push(`config: ${loaded.sources.length ? loaded.sources.join(" + ") : "defaults (no config file)"}`);
  lines.push(`data home: ${loaded.home}`);
  const agent = resolveAgent(loaded.config);
  lines.push(
    `agent: ${loaded.config.agent?.command ? [agent.command, ...agent.args].join(" ") : "bundled demo agent"}`,
  );
  if (loaded.config.agent?.command) {
    // Otherwise the first message would be the one to find out, as "agent failed to start".
    const found = findExecutable(agent.command, loaded.env.PATH ?? "", agent.cwd ?? process.cwd());
    if (!found) {
      healthy = false;
      lines.push(`✗ agent: "${agent.command}" is not an executable file nor found on PATH`);
    }
  }
  const home = checkHome(loaded.home, processIsAlive);
  lines.push(...home.lines);
  healthy &&= home.healthy;
  // Read-only (safe while parley runs); a damaged store is reported with its repair, never touched.
  const store = storeReportLines(await storeReport(loaded.home), nowMs);
  lines.push(...store.lines);
  healthy &&= store.healthy;
  for (const entry of channels) {
    const probe = probeChannel(
      entry,
      loaded.config.channels[entry.name] ?? {},
      loaded.env,
      loaded.present.has(entry.name),
    );
    if (probe.status === "configured") lines.push(`✓ ${entry.name}: configured`);
    else if (probe.status === "disabled")
      lines.push(`- ${entry.name}: disabled${probe.note ? ` (${probe.note})` : ""}`);
    else {
      healthy = false;
      lines.push(
        `✗ ${entry.name}: incomplete, missing ${probe.missing?.join(", ") ?? "settings"} (see ${entry.docs})`,
      );
    }
  }
  return { lines, healthy };
}
