/**
 * Which channels run on which gateway when several share one PostgreSQL (issue 26): a channel whose
 * platform allows one connection (Discord's gateway session, WhatsApp's linked device, Telegram's
 * getUpdates) starts only on the gateway elected for it and moves when that gateway stops; one that
 * may be shared (Slack Socket Mode) runs on every gateway. Real Gateway instances; the channels are
 * stand-ins that record where they run (the platforms themselves are tested in their own suites).
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { SINGLE_CONNECTIONS } from "../../src/gateway/cluster.js";
import { parseConfig } from "../../src/gateway/config.js";
import { Gateway } from "../../src/gateway/gateway.js";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import type { ChannelEntry } from "../../src/messaging/channel/contract.js";
import { useTestPostgres } from "../helpers/use-postgres.js";

const db = useTestPostgres();

/** Where each stand-in channel is running now, as "<channel>@<gateway>". */
const running = new Set<string>();

function standIn(name: string): ChannelEntry {
  return {
    name,
    docs: `docs/channels/${name}.md`,
    configSchema: z.strictObject({ enabled: z.boolean().optional() }),
    secretEnv: [],
    missing: () => [],
    load: async () => ({
      start: async (ctx) => {
        const where = `${name}@${ctx.home.endsWith("-a") ? "a" : "b"}`;
        running.add(where);
        return { name, stop: async () => void running.delete(where) };
      },
    }),
  };
}

const CHANNELS = ["telegram", "discord", "whatsapp", "slack"].map(standIn);

async function gateway(url: string, suffix: "a" | "b"): Promise<Gateway> {
  const sections = Object.fromEntries(CHANNELS.map((c) => [c.name, { enabled: true }]));
  const config = parseConfig(
    { ...sections, store: { url }, cluster: { leaseSeconds: 3, name: `gw-${suffix}` } },
    {},
    CHANNELS,
  );
  return Gateway.start({
    config,
    env: {},
    home: `${mkdtempSync(join(tmpdir(), `parley-single-${suffix}`))}-${suffix}`,
    logger: new MemoryLogger(),
    announce: () => {},
    channels: CHANNELS,
  });
}

describe("single platform connections across gateways", () => {
  it("Telegram, Discord and WhatsApp run on one elected gateway and move when it stops; Slack runs on both", async () => {
    expect(Object.keys(SINGLE_CONNECTIONS).sort()).toEqual(["discord", "telegram", "whatsapp"]);
    const url = await db.server.createDatabase();
    const a = await gateway(url, "a");
    const b = await gateway(url, "b");
    try {
      expect([...running].sort()).toEqual(["discord@a", "slack@a", "slack@b", "telegram@a", "whatsapp@a"]);
      // A graceful stop releases at once: B wins each election at its next tick.
      await a.shutdown();
      await vi.waitFor(
        () => expect([...running].sort()).toEqual(["discord@b", "slack@b", "telegram@b", "whatsapp@b"]),
        { timeout: 10_000, interval: 100 },
      );
    } finally {
      await a.shutdown();
      await b.shutdown();
    }
    expect(running.size).toBe(0);
  }, 30_000);
});
