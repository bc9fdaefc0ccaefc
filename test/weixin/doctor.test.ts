/**
 * `parley doctor` for Weixin, through the real CLI: the origin, whether a bot is linked (and who
 * owns it, masked), whether the session is paused after -14 (then unhealthy: relink may be needed);
 * the token never. Also the CLI table: `parley weixin link` is reachable by name.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { CliIo } from "../../src/gateway/cli.js";
import { runCli } from "../../src/gateway/cli.js";
import { writeHealth, writeLink } from "../../src/weixin/home.js";

const TOKEN = "weixin-token-Zq81kqPz0aXyTT";

async function doctor(o: { config?: unknown; env?: Record<string, string>; home?: string } = {}) {
  const home = o.home ?? mkdtempSync(join(tmpdir(), "parley-weixin-doctor-"));
  if (o.config !== undefined) writeFileSync(join(home, "config.json"), JSON.stringify(o.config));
  const out: string[] = [];
  const io: CliIo = {
    out: (l) => out.push(l),
    err: (l) => out.push(l),
    env: { PARLEY_HOME: home, ...o.env },
    cwd: home,
    stopSignal: () => new Promise(() => {}),
  };
  const code = await runCli(["doctor"], io);
  return { code, out: out.join("\n"), home };
}

const linkedHome = () => {
  const home = mkdtempSync(join(tmpdir(), "parley-weixin-doctor-"));
  writeLink(home, { botId: "b0t1d2e3@im.bot", ownerUserId: "owner0001@im.wechat", linkedAt: 1 });
  return home;
};

describe("parley doctor: weixin", () => {
  it("not linked: says how to link, and is unhealthy", async () => {
    const r = await doctor({ config: { weixin: { allowedUserIds: ["guest0002@im.wechat"] } } });
    expect(r.out).toContain("✗ not linked: run `parley weixin link`");
    expect(r.out).toContain("origin: https://ilinkai.weixin.qq.com (iLink's)");
    expect(r.code).not.toBe(0);
  });

  it("linked: the origin, the bot and owner masked, not paused; the token never", async () => {
    const home = linkedHome();
    const r = await doctor({ home, env: { WEIXIN_BOT_TOKEN: TOKEN } });
    expect(r.out).toContain("weixin: configured");
    expect(r.out).toContain("✓ linked bot: b0t…3@im.bot; owner: own…1@im.wechat");
    expect(r.out).toContain("✓ session: not paused");
    expect(r.out).toContain("direct messages: allowlist (0 id(s) plus the owner)");
    expect(r.out).not.toContain(TOKEN);
  });

  it("paused after -14: unhealthy, relink may be needed", async () => {
    const home = linkedHome();
    writeHealth(home, { pausedUntil: Date.now() + 30 * 60_000, at: Date.now() });
    const r = await doctor({ home, env: { WEIXIN_BOT_TOKEN: TOKEN } });
    expect(r.out).toMatch(/✗ session paused after -14 \(expired\) until .*: relink may be needed/);
    expect(r.code).not.toBe(0);
    // A pause that ended is no longer reported.
    writeHealth(home, { pausedUntil: Date.now() - 1000, at: Date.now() });
    expect((await doctor({ home, env: { WEIXIN_BOT_TOKEN: TOKEN } })).out).toContain("✓ session: not paused");
  });

  it("the origin from WEIXIN_API_URL; an unknown dmPolicy refuses everyone and says so", async () => {
    const home = linkedHome();
    const r = await doctor({
      home,
      config: { weixin: { dmPolicy: "everyone" } },
      env: { WEIXIN_BOT_TOKEN: TOKEN, WEIXIN_API_URL: "https://ilink.example.test" },
    });
    expect(r.out).toContain("origin: https://ilink.example.test; media:");
    expect(r.out).toContain(
      'weixin.dmPolicy "everyone" is not allowlist, open or disabled: everyone is refused',
    );
  });
});
