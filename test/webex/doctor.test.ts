/** `parley doctor` for Webex: what is missing, where the token goes, and a pin off Webex's domains. */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { CliIo } from "../../src/gateway/cli.js";
import { runCli } from "../../src/gateway/cli.js";
import { pinProblem, TokenHosts } from "../../src/webex/hosts.js";

async function doctor(config: unknown, env: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), "parley-webex-doctor-"));
  const cwd = join(dir, "project");
  mkdirSync(cwd);
  writeFileSync(join(dir, "config.json"), JSON.stringify(config));
  const out: string[] = [];
  const err: string[] = [];
  const io: CliIo = {
    out: (l) => out.push(l),
    err: (l) => err.push(l),
    env: { PARLEY_HOME: dir, ...env },
    cwd,
    stopSignal: () => new Promise(() => {}),
  };
  const code = await runCli(["doctor"], io);
  return { code, out: out.join("\n"), err: err.join("\n") };
}

describe("webex doctor", () => {
  it("names a missing token", async () => {
    const r = await doctor({ webex: { allowedEmails: ["alice@example.com"] } });
    expect(r.out).toContain("✗ webex: incomplete, missing WEBEX_BOT_TOKEN");
    expect(r.code).not.toBe(0);
  }, 60_000);

  it("shows the REST base, the WDM host and the cluster rule, never the token", async () => {
    const token = "secret-webex-token-value";
    const r = await doctor(
      { webex: { allowedEmails: ["alice@example.com"], wdmUrl: "https://wdm-a.wbx2.com/wdm/api/v1" } },
      { WEBEX_BOT_TOKEN: token },
    );
    expect(r.out).toContain("✓ webex: configured");
    expect(r.out).toContain("REST base: https://webexapis.com/v1");
    expect(r.out).toContain("WDM host: wdm-a.wbx2.com (pinned)");
    expect(r.out).toContain("cluster: each conversation URL's host looked up in the U2C host map");
    expect(r.out + r.err).not.toContain(token);
  }, 60_000);

  it("shows the proxy HTTPS_PROXY names, without its credentials; a malformed one fails", async () => {
    const config = { webex: { allowedEmails: ["alice@example.com"] } };
    const proxied = await doctor(config, {
      WEBEX_BOT_TOKEN: "t",
      HTTPS_PROXY: "http://user:proxy-secret@proxy.corp:3128",
    });
    expect(proxied.out).toContain("proxy: http://proxy.corp:3128 (HTTPS_PROXY)");
    expect(proxied.out + proxied.err).not.toContain("proxy-secret");
    const bypassed = await doctor(config, {
      WEBEX_BOT_TOKEN: "t",
      HTTPS_PROXY: "http://proxy.corp:3128",
      NO_PROXY: "webexapis.com",
    });
    expect(bypassed.out).toContain("proxy: none (direct)");
    const bad = await doctor(config, { WEBEX_BOT_TOKEN: "t", HTTPS_PROXY: "socks5://proxy.corp:1080" });
    expect(bad.out).toContain("proxy: HTTPS_PROXY must be an http:// or https:// proxy");
    expect(bad.code).not.toBe(0);
  }, 60_000);

  it("refuses a WDM pin off Webex's domains", async () => {
    const r = await doctor(
      { webex: { allowedEmails: ["alice@example.com"], wdmUrl: "https://wdm.webex.com.evil.example/wdm" } },
      { WEBEX_BOT_TOKEN: "t" },
    );
    expect(r.code).not.toBe(0);
    expect(r.err + r.out).toMatch(
      /webex\.wdmUrl[\s\S]*a WDM pin must be under webex\.com, wbx2\.com, ciscospark\.com/,
    );
  }, 60_000);
});

describe("where the token may go", () => {
  // As start() builds it: the API origin (its default is webexapis.com) is one of the configured ones.
  const hosts = new TokenHosts([
    "https://webexapis.com/v1",
    "https://proxy.corp.example/v1",
    "http://127.0.0.1:9999/u2c",
    "http://10.0.0.5/v1",
  ]);

  it("https Webex hosts and the configured origins only", () => {
    expect(hosts.allows("https://webexapis.com/v1/messages")).toBe(true);
    expect(hosts.allows("https://wdm-a.wbx2.com/wdm/api/v1/devices")).toBe(true);
    expect(hosts.allows("https://proxy.corp.example/v1/people/me")).toBe(true);
    expect(hosts.allows("http://127.0.0.1:9999/wdm")).toBe(true);
    // Plain http, a look-alike suffix, another port, a non-loopback http origin in config.
    expect(hosts.allows("http://webexapis.com/v1")).toBe(false);
    expect(hosts.allows("https://webex.com.evil.example/")).toBe(false);
    expect(hosts.allows("https://evilwebex.com/")).toBe(false);
    expect(hosts.allows("http://127.0.0.1:9998/wdm")).toBe(false);
    expect(hosts.allows("http://10.0.0.5/v1/messages")).toBe(false);
  });

  it("a pin is a Webex host or loopback", () => {
    expect(pinProblem("https://wdm-a.wbx2.com/wdm/api/v1")).toBeNull();
    expect(pinProblem("http://127.0.0.1:8080/wdm")).toBeNull();
    expect(pinProblem("http://wdm-a.wbx2.com/wdm")).toMatch(/https/);
    expect(pinProblem("https://example.com/wdm")).toMatch(/must be under/);
  });
});
