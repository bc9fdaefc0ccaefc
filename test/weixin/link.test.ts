/**
 * `parley weixin link` against the fake: the QR flow (wait, scaned, confirmed; an expired code is
 * replaced), the token stored only in the secrets file (0600, never config), the scanner recorded as
 * owner, and a login naming a foreign base URL refused with nothing stored. `unlink` forgets it.
 */
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { CliIo } from "../../src/gateway/cli.js";
import { runCli } from "../../src/gateway/cli.js";
import { channelSettingsOf } from "../../src/gateway/config.js";
import type { ChannelCliContext } from "../../src/messaging/channel/contract.js";
import { readLink } from "../../src/weixin/home.js";
import type { WeixinSettings } from "../../src/weixin/index.js";
import { missingWeixin, weixinChannel } from "../../src/weixin/index.js";
import { linkCommand, unlinkCommand } from "../../src/weixin/link.js";
import { FakeIlink } from "../fakes/weixin/server.js";

let fake: FakeIlink | undefined;
afterEach(async () => {
  expect(fake?.authFailures ?? 0).toBe(0);
  await fake?.stop();
  fake = undefined;
});

function cli(
  origin: string,
  home: string,
): ChannelCliContext<WeixinSettings> & { lines: string[]; errors: string[] } {
  const lines: string[] = [];
  const errors: string[] = [];
  return {
    settings: channelSettingsOf(weixinChannel, {}, { WEIXIN_API_URL: origin }) as WeixinSettings,
    env: { WEIXIN_API_URL: origin },
    home,
    args: [],
    out: (l) => lines.push(l),
    err: (l) => errors.push(l),
    stopSignal: () => new Promise<string>(() => {}),
    lines,
    errors,
  };
}

const home = () => mkdtempSync(join(tmpdir(), "parley-weixin-link-"));

describe("parley weixin link", () => {
  it("stores the token in the secrets file only (0600) and records the scanner as owner", async () => {
    fake = await FakeIlink.start({ loginScript: ["wait", "scaned", "confirmed"] });
    const h = home();
    writeFileSync(join(h, ".env"), "OTHER=keep\nWEIXIN_BOT_TOKEN=stale-token-xxxxxxxx\n");
    const ctx = cli(fake.origin, h);
    const code = await linkCommand(ctx, { renderQr: (d) => `[QR ${d}]` });
    expect(code).toBe(0);
    expect(ctx.lines.join("\n")).toContain("[QR https://liteapp.weixin.qq.com/q/fake1]");
    expect(ctx.lines.join("\n")).toContain("Scanned");
    const env = readFileSync(join(h, ".env"), "utf8");
    expect(env).toBe(`OTHER=keep\nWEIXIN_BOT_TOKEN=${fake.token}\n`);
    expect(statSync(join(h, ".env")).mode & 0o777).toBe(0o600);
    const link = readLink(h);
    expect(link).toMatchObject({ botId: fake.botId, ownerUserId: fake.scannerId });
    // The link record is not a secret store: the token appears in the secrets file alone.
    expect(readFileSync(join(h, "weixin", "link.json"), "utf8")).not.toContain(fake.token);
    expect(existsSync(join(h, "config.json"))).toBe(false);
    expect(ctx.lines.join("\n")).not.toContain(fake.token);
    // Linked: the owner is admitted, so an empty allow-list is complete.
    const settings = channelSettingsOf(weixinChannel, {}, {}) as WeixinSettings;
    expect(missingWeixin(settings, { WEIXIN_BOT_TOKEN: fake.token }, h)).toEqual([]);
    expect(missingWeixin(settings, {}, home())).toHaveLength(2);
  });

  it("replaces an expired QR code", async () => {
    fake = await FakeIlink.start({ loginScript: ["wait", "expired", "confirmed"] });
    const ctx = cli(fake.origin, home());
    expect(await linkCommand(ctx, { renderQr: () => "[QR]" })).toBe(0);
    expect(fake.callsTo("get_bot_qrcode")).toHaveLength(2);
    expect(ctx.lines.join("\n")).toContain("expired");
  });

  it("refuses a login naming a foreign base URL, and stores nothing", async () => {
    fake = await FakeIlink.start({ loginBaseUrl: "https://evil.example.com" });
    const h = home();
    const ctx = cli(fake.origin, h);
    expect(await linkCommand(ctx, { renderQr: () => "[QR]" })).toBe(1);
    expect(ctx.errors.join("\n")).toContain("evil.example.com");
    expect(existsSync(join(h, ".env"))).toBe(false);
    expect(readLink(h)).toBeNull();
  });

  it("keeps an https base URL under weixin.qq.com for the channel to use", async () => {
    fake = await FakeIlink.start({ loginBaseUrl: "https://ilinkai2.weixin.qq.com" });
    const h = home();
    expect(await linkCommand(cli(fake.origin, h), { renderQr: () => "[QR]" })).toBe(0);
    expect(readLink(h)?.baseUrl).toBe("https://ilinkai2.weixin.qq.com");
  });

  it("unlink removes the token and the record", async () => {
    fake = await FakeIlink.start();
    const h = home();
    expect(await linkCommand(cli(fake.origin, h), { renderQr: () => "[QR]" })).toBe(0);
    const ctx = cli(fake.origin, h);
    expect(await unlinkCommand(ctx)).toBe(0);
    expect(readFileSync(join(h, ".env"), "utf8")).not.toContain("WEIXIN_BOT_TOKEN");
    expect(readLink(h)).toBeNull();
  });

  it("through the real CLI table: `parley weixin link` writes the token to the data home's .env", async () => {
    fake = await FakeIlink.start();
    const h = home();
    const out: string[] = [];
    const io: CliIo = {
      out: (l) => out.push(l),
      err: (l) => out.push(l),
      env: { PARLEY_HOME: h, WEIXIN_API_URL: fake.origin },
      cwd: h,
      stopSignal: () => new Promise(() => {}),
    };
    expect(await runCli(["weixin", "link"], io)).toBe(0);
    expect(readFileSync(join(h, ".env"), "utf8")).toBe(`WEIXIN_BOT_TOKEN=${fake.token}\n`);
    expect(out.join("\n")).toContain("Linked bot");
    expect(out.join("\n")).not.toContain(fake.token);
  });
});
