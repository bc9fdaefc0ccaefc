/**
 * HTTPS_PROXY on Webex: the REST calls, the device websocket and file downloads all tunnel through
 * the proxy with CONNECT, and the proxy learns host names only, never the token. The fake serves TLS
 * under `api.webex.test`, a name this machine cannot resolve: only the proxy (which maps it to
 * loopback) can reach it, so a connection that skipped the proxy would fail outright. NO_PROXY and
 * loopback targets go direct.
 */
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { FakeWebex } from "../fakes/webex/server.js";
import { LoopbackProxy } from "../fakes/whatsapp/proxy.js";
import type { WebexOptions, WebexUnderTest } from "./harness.js";
import { ALICE, DM, done, startWebexChannel, text, until } from "./harness.js";

const fixture = (name: string) =>
  readFileSync(new URL(`../../fixtures/tls/${name}`, import.meta.url), "utf8");
const tls = { key: fixture("webex-test.key"), cert: fixture("webex-test.crt") };
const HOST = "api.webex.test";
const NOTES = new TextEncoder().encode("minutes: the proxy works\n");

let fake: FakeWebex | undefined;
let proxy: LoopbackProxy | undefined;
const started: WebexUnderTest[] = [];

afterEach(async () => {
  for (const c of started.splice(0)) await c.stop();
  await fake?.close();
  await proxy?.stop();
  fake = undefined;
  proxy = undefined;
});

async function setup(env: (p: LoopbackProxy) => Record<string, string>, o: WebexOptions = {}) {
  fake = await new FakeWebex({ lifetimeMs: 30_000, tls, hostname: HOST }).start();
  fake.addRoom(DM, "direct");
  proxy = await LoopbackProxy.start({ aliases: { [HOST]: "127.0.0.1" } });
  const f = fake;
  const p = proxy;
  const start = () =>
    startWebexChannel(f, { ...o, env: env(p), overrides: { ...o.overrides, tlsCa: tls.cert } }).then((c) => {
      started.push(c);
      return c;
    });
  return { fake: f, proxy: p, start };
}

describe("webex through HTTPS_PROXY", () => {
  it("REST, the device socket and a file download tunnel through the proxy; it never sees the token", async () => {
    const {
      fake: f,
      proxy: p,
      start,
    } = await setup((p) => ({ HTTPS_PROXY: p.url }), {
      turns: [[text("read through the tunnel"), done]],
    });
    const c = await start();
    const url = f.addFile({ name: "notes.txt", type: "text/plain", bytes: NOTES, state: "clean" });
    f.userMessage({ email: ALICE, roomId: DM, text: "see attached", files: [url] });
    await until(
      () => f.botMessages(DM).some((m) => m.markdown.includes("read through the tunnel")),
      "the answer",
    );
    expect(JSON.stringify(c.providers[0]?.prompts)).toContain("the proxy works");
    const port = new URL(f.apiUrl).port;
    // The socket holds its own tunnel beside the REST connections.
    expect(p.tunnels.length).toBeGreaterThanOrEqual(2);
    expect(new Set(p.tunnels.map((t) => t.target))).toEqual(new Set([`${HOST}:${port}`]));
    expect(p.tunnels.every((t) => t.authorized)).toBe(true);
    // What the proxy was told: CONNECT host:port and its own credentials; never Webex's token.
    for (const headers of p.connectHeaders) expect(headers.authorization).toBeUndefined();
    expect(JSON.stringify(p.connectHeaders)).not.toContain(f.token);
    // Inside the tunnel every request reached Webex with the token, and the file was downloaded.
    expect(f.calls.every((call) => call.authorized && call.host === `${HOST}:${port}`)).toBe(true);
    expect(f.callsTo("GET", /^\/v1\/contents\//)).toHaveLength(1);
  });

  it("the token still goes only to allowed hosts: an off-origin file URL opens no tunnel", async () => {
    const {
      fake: f,
      proxy: p,
      start,
    } = await setup((p) => ({ HTTPS_PROXY: p.url }), {
      turns: [[text("never"), done]],
    });
    const c = await start();
    f.userMessage({ email: ALICE, roomId: DM, text: "look", files: ["https://files.evil.example/x"] });
    await until(
      () => f.botMessages(DM).some((m) => m.markdown.includes("not on Webex's file server")),
      "refusal",
    );
    expect(c.providers).toHaveLength(0);
    expect(p.tunnels.some((t) => t.target.includes("evil"))).toBe(false);
    expect(p.connectHeaders.every((h) => h.host?.startsWith(HOST))).toBe(true);
  });

  it("NO_PROXY sends Webex direct: the proxy is asked for nothing (and the name cannot be reached)", async () => {
    const { proxy: p, start } = await setup((p) => ({
      HTTPS_PROXY: p.url,
      NO_PROXY: "localhost,.webex.test",
    }));
    await expect(start()).rejects.toThrow(/token was refused/);
    expect(p.connectHeaders).toEqual([]);
  });

  it("a loopback Webex goes direct whatever HTTPS_PROXY and HTTP_PROXY say", async () => {
    const p = await LoopbackProxy.start();
    proxy = p;
    const local = await new FakeWebex({ lifetimeMs: 30_000 }).start();
    fake = local;
    local.addRoom(DM, "direct");
    const c = await startWebexChannel(local, {
      env: { HTTPS_PROXY: p.url, HTTP_PROXY: p.url },
      turns: [[text("straight here"), done]],
    });
    started.push(c);
    local.userMessage({ email: ALICE, roomId: DM, text: "hi" });
    await until(() => local.botMessages(DM).some((m) => m.markdown.includes("straight here")), "the answer");
    expect(p.connectHeaders).toEqual([]);
  });

  it("a malformed HTTPS_PROXY stops start with a clear error", async () => {
    const { start } = await setup(() => ({ HTTPS_PROXY: "ftp://proxy.corp:21" }));
    await expect(start()).rejects.toThrow(/HTTPS_PROXY must be an http:\/\/ or https:\/\/ proxy/);
  });
});
