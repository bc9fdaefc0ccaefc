/**
 * End to end: the gateway starts Telegram through its registry entry (configured() probe, lazy
 * load()), with the bundled demo agent as a real ACP subprocess and grammY's real client on the fake
 * Bot API. Only the network boundary is faked.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/gateway/config.js";
import { Gateway } from "../../src/gateway/gateway.js";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import { telegramChannel } from "../../src/telegram/index.js";
import { parseTelegramHtml } from "../fakes/telegram/html.js";
import { FakeTelegram } from "../fakes/telegram/server.js";

const OWNER = 4242;
let fake: FakeTelegram;
let gateway: Gateway;

beforeAll(async () => {
  process.env.DEMO_AGENT_SPEED = "0";
  fake = await FakeTelegram.start({ lifetimeMs: 120_000 });
  gateway = await Gateway.start({
    config: parseConfig({ telegram: { allowedUserIds: [OWNER], apiRoot: fake.apiRoot } }, {}),
    env: { TELEGRAM_BOT_TOKEN: fake.token },
    home: mkdtempSync(join(tmpdir(), "parley-tg-e2e-")),
    logger: new MemoryLogger(),
    announce: () => {},
    channels: [telegramChannel],
  });
}, 60_000);

afterAll(async () => {
  await gateway?.shutdown();
  await fake?.stop();
});

const answered = (pattern: RegExp) => () => fake.sentMessages(OWNER).some((m) => pattern.test(m.visible));

describe("telegram with the demo agent", () => {
  it("starts through the registry entry", () => {
    expect(gateway.failures).toEqual([]);
    expect(gateway.running.map((c) => c.name)).toEqual(["telegram"]);
  });

  it("approving the tool by button runs it", async () => {
    fake.pushMessage({ id: OWNER }, "please use the tool");
    await fake.waitFor(answered(/Permission needed: Write notes\.md/), 30_000, "the prompt");
    const prompt = fake.sentMessages(OWNER).find((m) => m.visible.includes("Permission needed"));
    const keyboard = prompt?.replyMarkup as { inline_keyboard: { text: string; callback_data: string }[][] };
    const approve = keyboard.inline_keyboard.flat().find((b) => b.callback_data.endsWith(":1"));
    fake.pushCallback({ id: OWNER }, prompt?.messageId ?? 0, approve?.callback_data ?? "");
    await fake.waitFor(answered(/Permission approved \(allow_once\)/), 30_000, "the tool result");
    await fake.waitFor(answered(/Finished in/), 30_000, "the end of the turn");
  }, 60_000);

  it("a long answer is split within the cap and a secret never reaches a body", async () => {
    fake.pushMessage({ id: OWNER }, "long");
    fake.pushMessage({ id: OWNER }, "/queue secret");
    await fake.waitFor(
      () => fake.sentMessages(OWNER).filter((m) => m.visible.includes("Finished in")).length >= 3,
      60_000,
      "both answers",
    );
    for (const call of fake.calls.filter(
      (c) => c.method === "sendMessage" || c.method === "editMessageText",
    )) {
      const body = String(call.params.text);
      expect(body.length).toBeLessThanOrEqual(4096);
      expect(body).not.toContain("AKIAIOSFODNN7EXAMPLE");
      expect(parseTelegramHtml(body)).not.toContain("AKIAIOSFODNN7EXAMPLE");
    }
  }, 90_000);
});
