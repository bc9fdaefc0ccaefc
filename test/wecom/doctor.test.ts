/**
 * `parley doctor` for WeCom, through the real CLI: the origin, the bot id masked, the allow-list
 * size, the media hosts and the last connection verdict a running gateway recorded; the secret never.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { CliIo } from "../../src/gateway/cli.js";
import { runCli } from "../../src/gateway/cli.js";
import { writeHealth } from "../../src/wecom/health.js";

const BOT_ID = "aibQz7RkWm3pLx9";
const SECRET = "wecom-secret-Vb81kqPz0aXy";

async function doctor(o: { config?: unknown; env?: Record<string, string>; home?: string } = {}) {
  const home = o.home ?? mkdtempSync(join(tmpdir(), "parley-wecom-doctor-"));
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

const configured = {
  config: { wecom: { allowedUsers: ["zhangsan", "lisi"] } },
  env: { WECOM_BOT_ID: BOT_ID, WECOM_SECRET: SECRET },
};

describe("parley doctor: wecom", () => {
  it("shows the origin, the masked bot id, the allow-list and that no verdict is recorded yet", async () => {
    const r = await doctor(configured);
    expect(r.out).toContain("✓ wecom: configured");
    expect(r.out).toContain("origin: wss://openws.work.weixin.qq.com");
    expect(r.out).toContain("bot id: aib…x9");
    expect(r.out).toContain("allow-list: 2 userids");
    expect(r.out).toContain("last verdict: none recorded yet");
    expect(r.out).not.toContain(BOT_ID);
    expect(r.out).not.toContain(SECRET);
  });

  it("shows the last verdict a running gateway recorded: a refused subscription names the credentials", async () => {
    const home = mkdtempSync(join(tmpdir(), "parley-wecom-doctor-"));
    writeHealth(home, { state: "unhealthy", reason: "subscribe_refused", at: Date.UTC(2026, 0, 2, 3, 4, 5) });
    const r = await doctor({ ...configured, home });
    expect(r.out).toContain(
      "last verdict: unhealthy: WeCom refused the subscription: check WECOM_BOT_ID and WECOM_SECRET (retrying) at 2026-01-02T03:04:05.000Z",
    );
    writeHealth(home, { state: "healthy", at: Date.UTC(2026, 0, 2, 3, 5, 0) });
    expect((await doctor({ ...configured, home })).out).toContain("last verdict: healthy (subscribed)");
  });

  it("the origin setting from WECOM_WS_URL, media hosts from WECOM_MEDIA_HOSTS", async () => {
    const r = await doctor({
      ...configured,
      env: {
        ...configured.env,
        WECOM_WS_URL: "wss://ws.example.internal",
        WECOM_MEDIA_HOSTS: "media.example.internal, files.example.internal",
      },
    });
    expect(r.out).toContain("origin: wss://ws.example.internal");
    expect(r.out).toContain("media hosts: media.example.internal, files.example.internal");
  });

  it("names what is missing: the secret, or an allow-list", async () => {
    const noSecret = await doctor({ ...configured, env: { WECOM_BOT_ID: BOT_ID } });
    expect(noSecret.code).toBe(1);
    expect(noSecret.out).toContain("✗ wecom: incomplete, missing WECOM_SECRET (see docs/channels/wecom.md)");
    const nobody = await doctor({ config: { wecom: {} }, env: configured.env });
    expect(nobody.out).toContain("missing wecom.allowedUsers (or wecom.allowAllUsers)");
    expect(nobody.out).not.toContain(SECRET);
  });
});
