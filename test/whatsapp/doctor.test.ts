/**
 * `parley doctor` on WhatsApp, through the real command line: not linked, linked (the number
 * masked), and keys other accounts could read. The origin and proxy are shown, a proxy's password
 * never.
 */
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { CliIo } from "../../src/gateway/cli.js";
import { runCli } from "../../src/gateway/cli.js";
import { openAuthState } from "../../src/whatsapp/auth-state.js";

const NUMBER = "4917012345678";

async function linked(home: string): Promise<void> {
  const auth = await openAuthState(home);
  auth.state.creds.me = { id: `${NUMBER}:12@s.whatsapp.net`, lid: "90000000001@lid", name: "Op" };
  auth.state.creds.registered = true;
  auth.state.creds.account = { details: Buffer.from("adv") };
  await auth.saveCreds();
  await auth.state.keys.set({ "lid-mapping": { "90000000001": NUMBER } });
}

async function doctor(
  prepare: (home: string) => Promise<void> | void,
  whatsapp: unknown = {},
  env: Record<string, string> = {},
) {
  const home = mkdtempSync(join(tmpdir(), "parley-wa-doctor-"));
  chmodSync(home, 0o700);
  await prepare(home);
  writeFileSync(join(home, "config.json"), JSON.stringify({ whatsapp }), { mode: 0o600 });
  const cwd = join(home, "project");
  mkdirSync(cwd, { mode: 0o700 });
  const out: string[] = [];
  const io: CliIo = {
    out: (l) => out.push(l),
    err: (l) => out.push(l),
    env: { PARLEY_HOME: home, ...env },
    cwd,
    stopSignal: () => new Promise(() => {}),
  };
  const code = await runCli(["doctor"], io);
  const text = out.join("\n");
  const start = text.lastIndexOf("\n", text.indexOf("whatsapp:")) + 1;
  return { code, home, whatsapp: text.slice(start), all: text };
}

describe("parley doctor, WhatsApp", () => {
  it("not linked: says how to link, where the keys go, and fails", async () => {
    const r = await doctor(() => {});
    expect(r.code).toBe(1);
    expect(r.whatsapp).toContain("✗ whatsapp: incomplete, missing a linked WhatsApp account");
    expect(r.whatsapp).toContain("origin: wss://web.whatsapp.com/ws/chat (WhatsApp's)");
    expect(r.whatsapp).toContain(
      `✗ not linked: run \`parley whatsapp link\` (keys go to ${join(r.home, "whatsapp")})`,
    );
  }, 60_000);

  it("linked: the account masked, owner-only keys, the origin and proxy without its password", async () => {
    const r = await doctor(linked, {
      webSocketUrl: "ws://127.0.0.1:9/ws/chat",
      proxyUrl: "http://user:hunter2pass@proxy.example:3128",
      dmPolicy: "allowlist",
      allowFrom: ["+4917000000002"],
    });
    expect(r.whatsapp).toContain("✓ whatsapp: configured");
    expect(r.whatsapp).toContain("origin: ws://127.0.0.1:9/ws/chat");
    expect(r.whatsapp).toContain("proxy: http://•••@proxy.example:3128");
    expect(r.whatsapp).toContain("✓ linked account: +49•••••••5678");
    expect(r.whatsapp).toContain(`✓ permissions: ${join(r.home, "whatsapp")} is owner-only`);
    expect(r.whatsapp).toContain("direct messages: allowlist (1 number(s)); groups: 0");
    expect(r.all).not.toContain(NUMBER);
    expect(r.all).not.toContain("hunter2pass");
  }, 60_000);

  it("WHATSAPP_WS_URL and WHATSAPP_PROXY_URL in the environment win over the file", async () => {
    const r = await doctor(
      linked,
      { webSocketUrl: "wss://file.example/ws", proxyUrl: "http://file.example:1" },
      { WHATSAPP_WS_URL: "ws://127.0.0.1:7/ws/chat", WHATSAPP_PROXY_URL: "http://127.0.0.1:3128" },
    );
    expect(r.whatsapp).toContain("origin: ws://127.0.0.1:7/ws/chat");
    expect(r.whatsapp).toContain("proxy: http://127.0.0.1:3128");
  }, 60_000);

  it("loose permissions: each loose file named, and doctor fails", async () => {
    const r = await doctor(async (home) => {
      await linked(home);
      const dir = join(home, "whatsapp");
      chmodSync(dir, 0o755);
      for (const name of readdirSync(dir)) if (name.startsWith("creds")) chmodSync(join(dir, name), 0o644);
    });
    expect(r.code).toBe(1);
    expect(r.whatsapp).toContain("✓ linked account: +49•••••••5678");
    expect(r.whatsapp).toContain(`✗ permissions: ${join(r.home, "whatsapp")} is 0755`);
    expect(r.whatsapp).toContain(`✗ permissions: ${join(r.home, "whatsapp", "creds.json")} is 0644`);
    expect(r.whatsapp).not.toContain("lid-mapping-90000000001.json is");
  }, 60_000);

  it("no section and no link: the channel is off and says how to turn it on", async () => {
    const home = mkdtempSync(join(tmpdir(), "parley-wa-doctor-"));
    const out: string[] = [];
    await runCli(["doctor"], {
      out: (l) => out.push(l),
      err: (l) => out.push(l),
      env: { PARLEY_HOME: home },
      cwd: home,
      stopSignal: () => new Promise(() => {}),
    });
    expect(out).toContain("- whatsapp: disabled (link it to enable (parley whatsapp link))");
  }, 60_000);
});
