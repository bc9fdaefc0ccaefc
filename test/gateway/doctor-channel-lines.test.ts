/**
 * A channel's own `parley doctor` lines (ChannelEntry.doctor): indented under its status, shown
 * only for a channel that is not disabled, and a hook that throws is reported by its error's name,
 * never its message, while the report goes on.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/gateway/config.js";
import { doctor } from "../../src/gateway/doctor.js";
import type { ChannelEntry } from "../../src/messaging/channel/contract.js";
import { webchatChannel } from "../../src/webchat/index.js";
import { wecomChannel } from "../../src/wecom/index.js";

function loaded(channels: readonly ChannelEntry[], env: Record<string, string>) {
  const home = mkdtempSync(join(tmpdir(), "parley-doctor-lines-"));
  return loadConfig({ cwd: home, processEnv: { PARLEY_HOME: home, ...env }, channels });
}

const ENV = { WECOM_BOT_ID: "aib-doctor-lines", WECOM_SECRET: "s3cret-value-xyz" };

describe("channel doctor lines", () => {
  it("are indented under the channel's status, and a throwing hook is named without its message", async () => {
    const throwing = {
      ...wecomChannel,
      doctor: () => {
        throw new TypeError("echo of s3cret-value-xyz");
      },
    } as unknown as ChannelEntry;
    const channels = [webchatChannel, throwing];
    const report = await doctor(loaded(channels, ENV), { channels });
    const at = report.lines.findIndex((l) => l.startsWith("✗ wecom") || l.startsWith("✓ wecom"));
    expect(at).toBeGreaterThan(-1);
    expect(report.lines[at + 1]).toBe("    (could not read wecom's state: TypeError)");
    expect(report.lines.join("\n")).not.toContain("s3cret");
  });

  it("a disabled channel adds none", async () => {
    const channels = [webchatChannel, wecomChannel as unknown as ChannelEntry];
    const report = await doctor(loaded(channels, {}), { channels });
    expect(report.lines.some((l) => l.startsWith("- wecom: disabled"))).toBe(true);
    expect(report.lines.join("\n")).not.toContain("origin: wss://");
  });
});
