/**
 * WhatsApp in the real gateway, from the registry: off (never imported) while nothing is linked;
 * on once the data home holds linked keys, with `WHATSAPP_WS_URL` from the environment reaching
 * the real baileys socket, which dials it.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/gateway/config.js";
import { Gateway } from "../../src/gateway/gateway.js";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import { webchatChannel } from "../../src/webchat/index.js";
import { whatsappChannel } from "../../src/whatsapp/index.js";
import { FakeWhatsApp } from "../fakes/whatsapp/server.js";
import { linkedHome } from "./harness.js";

let fake: FakeWhatsApp | undefined;
let gateway: Gateway | undefined;
afterEach(async () => {
  await gateway?.shutdown();
  gateway = undefined;
  await fake?.stop();
  fake = undefined;
});

async function start(home: string, env: Record<string, string>) {
  gateway = await Gateway.start({
    config: parseConfig({ webchat: { port: 0 } }, env, [webchatChannel, whatsappChannel]),
    env,
    home,
    logger: new MemoryLogger(),
    announce: () => {},
    channels: [webchatChannel, whatsappChannel],
  });
  return gateway;
}

describe("the gateway and WhatsApp", () => {
  it("leaves WhatsApp off while no account is linked", async () => {
    const g = await start(mkdtempSync(join(tmpdir(), "parley-wa-gw-")), {});
    expect(g.running.map((c) => c.name)).toEqual(["webchat"]);
    expect(g.failures).toEqual([]);
  });

  it("starts it once linked, and the real socket dials WHATSAPP_WS_URL", async () => {
    const f = await FakeWhatsApp.start({ lifetimeMs: 20_000 });
    fake = f;
    const home = await linkedHome(f);
    // No network in tests: baileys' built-in version, nothing asked of WhatsApp Web.
    const g = await start(home, { WHATSAPP_WS_URL: f.webSocketUrl, WHATSAPP_WEB_VERSION: "pinned" });
    expect(g.failures).toEqual([]);
    expect(g.running.map((c) => c.name).sort()).toEqual(["webchat", "whatsapp"]);
    await f.waitFor(() => f.wsConnections.some((c) => c.firstFrame != null), 10_000, "baileys dialing");
    expect(f.wsConnections[0]?.path).toBe("/ws/chat");
  }, 20_000);
});
