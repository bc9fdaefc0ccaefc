/**
 * The configuration's targets, scheduled prompts and channel-server settings: security keys (a
 * working-directory file may not set them), defaults, and configured jobs (a job `cfg-<name>` to a
 * named target; a past one-shot skipped; a bad time or an unknown target refused before start).
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/gateway/config.js";
import { configuredJobs } from "../../src/gateway/schedules-config.js";
import { silentLogger } from "../../src/messaging/base/logger.js";

function load(files: { home?: unknown; cwd?: unknown }) {
  const home = mkdtempSync(join(tmpdir(), "parley-config-"));
  const cwd = join(home, "project");
  mkdirSync(cwd);
  if (files.home !== undefined) writeFileSync(join(home, "config.json"), JSON.stringify(files.home));
  if (files.cwd !== undefined) writeFileSync(join(cwd, "parley.config.json"), JSON.stringify(files.cwd));
  return loadConfig({ cwd, processEnv: { PARLEY_HOME: home } });
}

const NOW = Date.UTC(2026, 0, 10, 12, 0);

describe("targets, schedules, agentTools and channelServer settings", () => {
  it.each(["targets", "schedules", "agentTools", "channelServer"])(
    "a working-directory file may not set %s (where messages go, what runs unattended)",
    (key) => {
      const value = key === "targets" ? { phone: "telegram:dm:1" } : {};
      expect(() => load({ cwd: { [key]: value } })).toThrow(new RegExp(`"${key}"`));
    },
  );

  it("defaults: body-free wakes on, agent tools on, no targets or schedules", () => {
    const { config } = load({});
    expect(config.channelServer).toMatchObject({
      bodyFreeWakes: true,
      coalesceMs: 750,
      permissionTimeoutSeconds: 300,
    });
    expect(config.agentTools.enabled).toBe(true);
    expect(config.targets).toEqual({});
    expect(config.schedules).toEqual({});
  });

  it("a target must be <channel>:<target id>; a schedule needs exactly one of every and at", () => {
    expect(() => load({ home: { targets: { phone: "123" } } })).toThrow(/targets/);
    expect(() =>
      load({ home: { schedules: { x: { every: "1h", at: "12:00", prompt: "p", deliverTo: "phone" } } } }),
    ).toThrow(/exactly one of every and at/);
  });

  it("configured jobs go to their named target; a past one-shot is skipped; a bad one refused", () => {
    const { config } = load({
      home: {
        targets: { phone: "telegram:dm:42" },
        schedules: {
          standup: { every: "24h", prompt: "summarize yesterday", deliverTo: "phone" },
          long_ago: { at: "2020-01-01 09:00", prompt: "too late", deliverTo: "phone" },
        },
      },
    });
    const jobs = configuredJobs(config, NOW, silentLogger);
    expect(jobs.map((j) => [j.id, j.deliverTo, j.nextRunMs - NOW, j.prompt])).toEqual([
      ["cfg-standup", { kind: "target", name: "phone" }, 86_400_000, "summarize yesterday"],
    ]);
    const unknown = load({
      home: { schedules: { x: { every: "1h", prompt: "p", deliverTo: "nowhere" } } },
    }).config;
    expect(() => configuredJobs(unknown, NOW, silentLogger)).toThrow(/no target "nowhere"/);
    const tooShort = load({
      home: {
        targets: { phone: "telegram:dm:42" },
        schedules: { x: { every: "10s", prompt: "p", deliverTo: "phone" } },
      },
    }).config;
    expect(() => configuredJobs(tooShort, NOW, silentLogger)).toThrow(/schedules\.x: The shortest interval/);
  });
});
