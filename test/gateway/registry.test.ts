import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { parseConfig } from "../../src/gateway/config.js";
import { Gateway } from "../../src/gateway/gateway.js";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import type { ChannelEntry } from "../../src/messaging/channel/contract.js";
import { webchatChannel } from "../../src/webchat/index.js";

describe("channel registry", () => {
  it("a channel whose load() throws does not stop the web chat from starting", async () => {
    const loaded: string[] = [];
    const section = z.strictObject({ enabled: z.boolean().optional() });
    const broken: ChannelEntry = {
      name: "broken",
      docs: "docs/channels/broken.md",
      configSchema: section,
      secretEnv: [],
      missing: () => [],
      load: async () => {
        loaded.push("broken");
        throw new Error("cannot import the SDK");
      },
    };
    const lazy: ChannelEntry = {
      name: "unconfigured",
      docs: "docs/channels/x.md",
      configSchema: section,
      // A secret that is not set: the probe reports the channel disabled without loading it.
      secretEnv: ["UNCONFIGURED_TOKEN"],
      missing: () => ["UNCONFIGURED_TOKEN"],
      load: async () => {
        loaded.push("unconfigured");
        throw new Error("must never be imported");
      },
    };
    const logger = new MemoryLogger();
    const announced: string[] = [];
    const channels = [broken, lazy, webchatChannel];
    const config = parseConfig({ webchat: { port: 0 } }, {}, channels);
    const gateway = await Gateway.start({
      config,
      env: {},
      home: mkdtempSync(join(tmpdir(), "parley-reg-")),
      logger,
      announce: (l) => announced.push(l),
      channels: [broken, lazy, webchatChannel],
    });
    try {
      expect(gateway.running.map((c) => c.name)).toEqual(["webchat"]);
      expect(gateway.failures).toEqual([{ name: "broken", error: "cannot import the SDK" }]);
      expect(loaded).toEqual(["broken"]); // the unconfigured channel was never imported
      expect(announced[0]).toMatch(/^parley web chat: http:\/\/127\.0\.0\.1:\d+\/\?token=/);
      expect(
        logger.entries.some((e) => e.level === "error" && e.message.includes("broken: failed to start")),
      ).toBe(true);
    } finally {
      await gateway.shutdown();
    }
  });

  it("refuses a non-loopback host unless asked, and warns when asked", async () => {
    const logger = new MemoryLogger();
    const base = {
      env: {},
      logger,
      announce: () => {},
      channels: [webchatChannel],
    };
    const g1 = await Gateway.start({
      ...base,
      home: mkdtempSync(join(tmpdir(), "p-")),
      config: parseConfig({ webchat: { host: "0.0.0.0", port: 0 } }, {}),
    });
    expect(g1.running).toEqual([]);
    expect(g1.failures[0]?.error).toContain("--allow-remote");
    await g1.shutdown();
    const g2 = await Gateway.start({
      ...base,
      home: mkdtempSync(join(tmpdir(), "p-")),
      config: parseConfig({ webchat: { host: "0.0.0.0", port: 0, allowRemote: true } }, {}),
    });
    expect(g2.running.map((c) => c.name)).toEqual(["webchat"]);
    expect(
      logger.entries.some((e) => e.level === "warn" && e.message.includes("reachable from other machines")),
    ).toBe(true);
    await g2.shutdown();
  });
});

describe("agent environment", () => {
  it("keeps the agent's own keys and strips parley's channel secrets", async () => {
    const { agentBaseEnv } = await import("../../src/gateway/gateway.js");
    expect(
      agentBaseEnv({
        PATH: "/bin",
        GEMINI_API_KEY: "agent-needs-this",
        TELEGRAM_BOT_TOKEN: "123:abc",
        DISCORD_BOT_TOKEN: "x",
        FEISHU_APP_SECRET: "feishu-secret",
        PARLEY_HOME: "/h",
        UNSET: undefined,
      }),
    ).toEqual({ PATH: "/bin", GEMINI_API_KEY: "agent-needs-this" });
  });
});
