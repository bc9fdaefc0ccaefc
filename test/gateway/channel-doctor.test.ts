/**
 * ChannelEntry.doctor, the kit hook a channel uses to add the platform's own view to `parley
 * doctor`: its lines are indented under the channel's status line, `healthy: false` fails doctor,
 * a check that throws is reported (redacted) rather than ending the report, and a disabled channel
 * is never asked.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { loadConfig } from "../../src/gateway/config.js";
import { doctor } from "../../src/gateway/doctor.js";
import type { ChannelEntry } from "../../src/messaging/channel/contract.js";
import { webchatChannel } from "../../src/webchat/index.js";

const section = z.strictObject({ enabled: z.boolean().optional() });

function entry(name: string, token: string, check: ChannelEntry["doctor"]): ChannelEntry {
  return {
    name,
    docs: `docs/channels/${name}.md`,
    configSchema: section,
    secretEnv: [token],
    missing: (_s, env) => (env[token] ? [] : [token]),
    load: async () => {
      throw new Error("doctor never loads a channel");
    },
    ...(check ? { doctor: check } : {}),
  };
}

async function report(channels: ChannelEntry[], env: Record<string, string>) {
  const home = mkdtempSync(join(tmpdir(), "parley-channel-doctor-"));
  const cwd = join(home, "project");
  mkdirSync(cwd);
  writeFileSync(join(home, "config.json"), "{}");
  const loaded = loadConfig({ cwd, processEnv: { PARLEY_HOME: home, ...env }, channels });
  return doctor(loaded, { channels, cwd });
}

describe("a channel's own doctor lines", () => {
  it("are shown under the channel, fail doctor when unhealthy, and a disabled channel is not asked", async () => {
    const asked: string[] = [];
    const good = entry("alpha", "ALPHA_TOKEN", async () => {
      asked.push("alpha");
      return { lines: ["✓ bot: @alpha"], healthy: true };
    });
    const off = entry("beta", "BETA_TOKEN", async () => {
      asked.push("beta");
      return { lines: ["never"], healthy: true };
    });
    const ok = await report([webchatChannel, good, off], { ALPHA_TOKEN: "a" });
    expect(ok.lines).toContain("✓ alpha: configured");
    expect(ok.lines[ok.lines.indexOf("✓ alpha: configured") + 1]).toBe("    ✓ bot: @alpha");
    expect(asked).toEqual(["alpha"]);
    expect(ok.healthy).toBe(true);

    const sick = entry("alpha", "ALPHA_TOKEN", async () => ({
      lines: ["✗ missing scopes: x"],
      healthy: false,
    }));
    const bad = await report([webchatChannel, sick], { ALPHA_TOKEN: "a" });
    expect(bad.lines).toContain("    ✗ missing scopes: x");
    expect(bad.healthy).toBe(false);
  });

  it("a check that throws is reported, redacted, and the report goes on", async () => {
    const secret = "xoxb-123456789012-1234567890123-abcdefghijklmnopqrstuvwx";
    const throwing = entry("alpha", "ALPHA_TOKEN", async () => {
      throw new Error(`request with ${secret} failed`);
    });
    const r = await report([throwing, webchatChannel], { ALPHA_TOKEN: "a" });
    const line = r.lines.find((l) => l.includes("alpha check failed"));
    expect(line).toBeDefined();
    expect(line).not.toContain(secret);
    expect(r.lines).toContain("✓ webchat: configured");
    expect(r.healthy).toBe(false);
  });
});
