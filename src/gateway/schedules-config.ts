/**
 * Scheduled prompts from the configuration (`schedules`): each becomes a job `cfg-<name>`, delivered
 * to a named target, kept across restarts while its entry is unchanged (the scheduler compares).
 * A one-shot `at` already in the past is skipped: it ran, or was configured too late.
 */
import { ParleyError } from "../messaging/base/errors.js";
import type { Logger } from "../messaging/base/logger.js";
import { parseAt, parseEvery } from "../messaging/schedule/spec.js";
import { hostUtcOffsetMinutes } from "../messaging/session/keys.js";
import type { ScheduledJob } from "../messaging/store/port.js";
import type { ParleyConfig } from "./config.js";

export function configuredJobs(config: ParleyConfig, nowMs: number, logger: Logger): ScheduledJob[] {
  const jobs: ScheduledJob[] = [];
  for (const [name, entry] of Object.entries(config.schedules)) {
    const clock = { now: nowMs, utcOffsetMinutes: hostUtcOffsetMinutes };
    const parsed =
      entry.every !== undefined
        ? parseEvery(`${entry.every} ${entry.prompt}`, clock)
        : parseAt(`${entry.at ?? ""} ${entry.prompt}`, clock);
    if (!parsed.ok) {
      if (entry.at !== undefined && parsed.error.includes("passed")) {
        logger.info(`schedules.${name}: its time has passed; not scheduled`);
        continue;
      }
      throw new ParleyError("CONFIG_INVALID", `schedules.${name}: ${parsed.error.replace(/`/g, "")}`);
    }
    if (!(entry.deliverTo in config.targets))
      throw new ParleyError(
        "CONFIG_INVALID",
        `schedules.${name}.deliverTo: no target "${entry.deliverTo}" in targets`,
      );
    jobs.push({
      id: `cfg-${name}`,
      channel: "config",
      conversationKey: `config:${name}`,
      sessionKey: `config:${name}`,
      userId: "config",
      deliverTo: { kind: "target", name: entry.deliverTo },
      address: null,
      prompt: parsed.prompt,
      schedule: parsed.schedule,
      nextRunMs: parsed.firstRunMs,
      createdMs: nowMs,
      runs: 0,
      running: null,
    });
  }
  return jobs;
}
