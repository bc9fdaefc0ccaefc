/**
 * `parley doctor` for Slack, through the real CLI against the fake's auth.test: the origin and mode
 * are shown, Socket Mode without an app token is named, a scope the bot token lacks fails doctor,
 * and no token is ever printed.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../../src/gateway/cli.js";
import { FakeSlack } from "../fakes/slack/server.js";
import { ALICE } from "./helpers.js";

let fake: FakeSlack | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function doctor(slack: Record<string, unknown>, env: Record<string, string>) {
  const home = mkdtempSync(join(tmpdir(), "parley-slack-doctor-"));
  const cwd = join(home, "project");
  mkdirSync(cwd);
  writeFileSync(join(home, "config.json"), JSON.stringify({ slack: { allowedUserIds: [ALICE], ...slack } }));
  const out: string[] = [];
  const code = await runCli(["doctor"], {
    out: (l) => out.push(l),
    err: (l) => out.push(l),
    env: { PARLEY_HOME: home, ...env },
    cwd,
    stopSignal: () => new Promise(() => {}),
  });
  return { code, out: out.join("\n") };
}

describe("parley doctor: slack", () => {
  it("shows the origin, the mode, the team and the bot; every scope granted", async () => {
    fake = await new FakeSlack().start();
    const r = await doctor(
      {},
      { SLACK_API_URL: fake.apiUrl, SLACK_BOT_TOKEN: fake.botToken, SLACK_APP_TOKEN: fake.appToken },
    );
    expect(r.out).toContain("✓ slack: configured");
    expect(r.out).toContain(`origin: ${fake.apiUrl}`);
    expect(r.out).toContain("mode: socket");
    expect(r.out).toContain(`✓ team: ${fake.teamId}`);
    expect(r.out).toContain(`✓ bot: ${fake.botUserId}`);
    expect(r.out).toMatch(/✓ scopes: all \d+ granted/);
    expect(r.code).toBe(0);
    // auth.test went to the configured origin with the bot token; no token is printed.
    expect(fake.callsTo("auth.test").map((c) => c.token)).toEqual([fake.botToken]);
    expect(r.out).not.toContain(fake.botToken);
    expect(r.out).not.toContain(fake.appToken);
  });

  it("names Socket Mode without an app token, and fails", async () => {
    fake = await new FakeSlack().start();
    const r = await doctor({ apiUrl: fake.apiUrl, mode: "socket" }, { SLACK_BOT_TOKEN: fake.botToken });
    expect(r.out).toContain("✗ slack: incomplete, missing SLACK_APP_TOKEN");
    expect(r.out).toContain("✗ socket mode needs SLACK_APP_TOKEN");
    expect(r.code).not.toBe(0);
  });

  it("names a scope the bot token lacks, and fails", async () => {
    fake = await new FakeSlack().start();
    fake.scopes = fake.scopes.filter((s) => s !== "files:write" && s !== "reactions:write");
    const r = await doctor(
      { apiUrl: fake.apiUrl, mode: "http" },
      { SLACK_BOT_TOKEN: fake.botToken, SLACK_SIGNING_SECRET: fake.signingSecret },
    );
    expect(r.out).toContain("✓ slack: configured");
    expect(r.out).toContain("mode: http");
    expect(r.out).toContain("✗ missing scopes: files:write, reactions:write");
    expect(r.code).not.toBe(0);
  });

  it("reports a token Slack refuses without printing it", async () => {
    fake = await new FakeSlack().start();
    const r = await doctor(
      { apiUrl: fake.apiUrl },
      { SLACK_BOT_TOKEN: "xoxb-not-the-fake-token", SLACK_APP_TOKEN: fake.appToken },
    );
    expect(r.out).toContain("✗ auth.test failed: invalid_auth");
    expect(r.out).not.toContain("xoxb-not-the-fake-token");
    expect(r.code).not.toBe(0);
  });
});
