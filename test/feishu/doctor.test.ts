/**
 * `parley doctor` with a Feishu section, run as the operator runs it (runCli) against the fake: the
 * domain it talks to, the app's name and the bot's open_id when all is well; the exact missing secret;
 * a secret Feishu rejects; and a wrong domain, each way it can be wrong (not a domain at all, a
 * server that is not Feishu, nothing listening). The secret never appears in what doctor prints.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../../src/gateway/cli.js";
import { FakeFeishu } from "../fakes/feishu/server.js";
import { OWNER } from "./channel-harness.js";

const SECRET = "fake-app-secret-0123456789";
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0)) await c();
});

async function fake(): Promise<FakeFeishu> {
  const f = await FakeFeishu.start({ appSecret: SECRET, lifetimeMs: 60_000 });
  cleanups.push(() => f.stop());
  return f;
}

async function doctor(feishu: Record<string, unknown>, env: Record<string, string>) {
  const home = mkdtempSync(join(tmpdir(), "parley-feishu-doctor-"));
  const cwd = join(home, "project");
  mkdirSync(cwd);
  writeFileSync(
    join(home, "config.json"),
    JSON.stringify({ feishu: { allowedOpenIds: [OWNER.openId], ...feishu } }),
  );
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(["doctor"], {
    out: (l) => out.push(l),
    err: (l) => err.push(l),
    env: { PARLEY_HOME: home, ...env },
    cwd,
    stopSignal: () => new Promise(() => {}),
  });
  const printed = [...out, ...err].join("\n");
  expect(printed).not.toContain(SECRET);
  return { code, out: out.join("\n"), err: err.join("\n") };
}

describe("parley doctor: feishu", () => {
  it("shows the domain, the app's name and the bot's open_id", async () => {
    const f = await fake();
    const r = await doctor({ appId: f.appId, domain: f.origin }, { FEISHU_APP_SECRET: SECRET });
    expect(r.out).toContain("✓ feishu: configured");
    expect(r.out).toContain(`✓ feishu: domain ${f.origin}`);
    expect(r.out).toContain(`✓ feishu: app "${f.appName}", bot open_id ${f.botOpenId}`);
    expect(r.code).toBe(0);
    // It asked this app's Feishu, and only with a token Feishu gave it.
    expect(f.callsTo(/bot\/v3\/info$/)).toHaveLength(1);
  });

  it("the app id and domain may come from the environment", async () => {
    const f = await fake();
    const r = await doctor(
      {},
      { FEISHU_APP_ID: f.appId, FEISHU_DOMAIN: f.origin, FEISHU_APP_SECRET: SECRET },
    );
    expect(r.out).toContain(`✓ feishu: app "${f.appName}", bot open_id ${f.botOpenId}`);
    expect(r.code).toBe(0);
  });

  it("a missing secret is named exactly, and Feishu is not asked", async () => {
    const f = await fake();
    const r = await doctor({ appId: f.appId, domain: f.origin }, {});
    expect(r.out).toContain("✗ feishu: incomplete, missing FEISHU_APP_SECRET (see docs/channels/feishu.md)");
    expect(r.code).toBe(1);
    expect(f.calls).toHaveLength(0);
  });

  it("a secret Feishu rejects is its own line, pointing at the app id and secret", async () => {
    const f = await fake();
    const r = await doctor(
      { appId: f.appId, domain: f.origin },
      { FEISHU_APP_SECRET: "not-the-secret-at-all" },
    );
    expect(r.out).toMatch(
      /✗ feishu: .* rejected the app id or secret \(code 10014: app secret invalid\); check feishu\.appId and FEISHU_APP_SECRET/,
    );
    expect(r.out).not.toContain("not-the-secret-at-all");
    expect(r.code).toBe(1);
  });

  it("a domain that is neither feishu, lark nor an https origin is a configuration error naming the key", async () => {
    const f = await fake();
    for (const domain of ["http://open.feishu.cn", "larksuite", "https://open.feishu.cn/open-apis"]) {
      const r = await doctor({ appId: f.appId, domain }, { FEISHU_APP_SECRET: SECRET });
      expect(r.code).toBe(2);
      expect(r.err).toContain("feishu.domain");
    }
    expect(f.calls).toHaveLength(0);
  });

  it("a domain where some other server answers: 'does not answer like Feishu', check feishu.domain", async () => {
    const other = createServer((req, res) => {
      req.resume();
      res.writeHead(404, { "content-type": "text/html" }).end("<html>Not Found</html>");
    });
    await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
    cleanups.push(() => new Promise((resolve) => other.close(() => resolve())));
    const origin = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
    const r = await doctor({ appId: "cli_a1b2c3d4e5f60718", domain: origin }, { FEISHU_APP_SECRET: SECRET });
    expect(r.out).toContain(`✓ feishu: domain ${origin}`);
    expect(r.out).toMatch(/✗ feishu: .* does not answer like Feishu \(HTTP 404\); check feishu\.domain/);
    expect(r.code).toBe(1);
  });

  it("a domain where nothing listens: 'could not be reached', check feishu.domain", async () => {
    const f = await fake();
    const origin = f.origin;
    await f.stop();
    const r = await doctor({ appId: f.appId, domain: origin }, { FEISHU_APP_SECRET: SECRET });
    expect(r.out).toMatch(/✗ feishu: .* could not be reached \(ECONNREFUSED\); check feishu\.domain/);
    expect(r.code).toBe(1);
  });
});
