/**
 * Who may read the health routes: /healthz anybody; /readyz and /metrics the holder of
 * PARLEY_METRICS_TOKEN (401 without it or with a wrong one), or, with no token configured, a
 * loopback peer only (403 for another machine, and for a request a proxy forwarded). The token is
 * read from the environment or $PARLEY_HOME/.env.
 */
import { readFileSync, writeFileSync } from "node:fs";
import type { IncomingMessage } from "node:http";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { runCli } from "../../src/gateway/cli.js";
import { decideAccess, isLoopback, tokenMatches } from "../../src/gateway/ops/http.js";
import { webchatChannel } from "../../src/webchat/index.js";
import type { StartedGateway } from "./helpers.js";
import { freshHome, get, startGateway } from "./helpers.js";

const TOKEN = "metrics-3f9c1a7e5b2d8046";
const started: StartedGateway[] = [];
afterEach(async () => {
  for (const g of started.splice(0)) await g.gateway.shutdown();
});

function request(remoteAddress: string, headers: Record<string, string> = {}): IncomingMessage {
  return { headers, socket: { remoteAddress } } as unknown as IncomingMessage;
}

describe("access to /readyz and /metrics", () => {
  it("with PARLEY_METRICS_TOKEN: 401 without it or with a wrong one, 200 with it; /healthz needs nothing", async () => {
    const g = await startGateway({
      raw: {},
      channels: [webchatChannel],
      env: { PARLEY_METRICS_TOKEN: TOKEN },
    });
    started.push(g);
    expect(await get(g.base, "/healthz")).toMatchObject({ status: 200, text: "ok\n" });
    const webchatToken = new URL(g.url).searchParams.get("token") ?? "";
    for (const path of ["/readyz", "/metrics"]) {
      const none = await get(g.base, path);
      expect(none.status, path).toBe(401);
      expect(none.text).toContain("Authorization: Bearer");
      expect((await get(g.base, path, { authorization: `Bearer ${TOKEN}x` })).status, path).toBe(401);
      expect((await get(g.base, path, { authorization: `Bearer ${TOKEN.slice(0, -1)}` })).status, path).toBe(
        401,
      );
      expect((await get(g.base, path, { authorization: `Basic ${TOKEN}` })).status, path).toBe(401);
      // The web chat's own token opens the page, not these.
      expect((await get(g.base, `${path}?token=${webchatToken}`)).status, path).toBe(401);
      expect((await get(g.base, path, { authorization: `Bearer ${webchatToken}` })).status, path).toBe(401);
      const ok = await get(g.base, path, { authorization: `Bearer ${TOKEN}` });
      expect(ok.status, path).toBe(200);
    }
    const metrics = await get(g.base, "/metrics", { authorization: `bearer ${TOKEN}` });
    expect(metrics.status).toBe(200);
    expect(metrics.type).toContain("text/plain");
    expect(metrics.text).toContain("# TYPE parley_turns_total counter");
    // A token-bearing request never becomes a write.
    const post = await fetch(`${g.base}/metrics`, {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(post.status).toBe(405);
    // Every refusal is audited, without the presented token.
    await g.gateway.shutdown();
    const audit = readFileSync(join(g.home, "audit.jsonl"), "utf8");
    const refused = audit
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { operation: string; outcome: string; fields: Record<string, unknown> })
      .filter((r) => r.operation === "ops.http");
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.every((r) => r.outcome === "refused" && r.fields.status === 401)).toBe(true);
    expect(new Set(refused.map((r) => r.fields.reason))).toEqual(new Set(["no_token", "bad_token"]));
    expect(audit).not.toContain(TOKEN);
  }, 60_000);

  it("with no token: loopback peers only; a forwarded request is refused with 403", async () => {
    const g = await startGateway({ raw: {}, channels: [webchatChannel] });
    started.push(g);
    expect((await get(g.base, "/readyz")).status).toBe(200);
    expect((await get(g.base, "/metrics")).status).toBe(200);
    const forwarded: Record<string, string>[] = [
      { "x-forwarded-for": "203.0.113.9" },
      { forwarded: "for=203.0.113.9" },
    ];
    for (const headers of forwarded) {
      const res = await get(g.base, "/metrics", headers);
      expect(res.status).toBe(403);
      expect(res.text).toContain("PARLEY_METRICS_TOKEN");
      expect((await get(g.base, "/readyz", headers)).status).toBe(403);
      // The liveness probe says nothing, so it stays open.
      expect((await get(g.base, "/healthz", headers)).status).toBe(200);
    }
  }, 60_000);

  it("decides by the peer's address and the token, comparing tokens whatever their length", () => {
    expect(decideAccess(request("10.1.2.3"), undefined)).toEqual({
      ok: false,
      status: 403,
      reason: "not_loopback",
    });
    expect(decideAccess(request("2001:db8::1"), undefined)).toMatchObject({ ok: false, status: 403 });
    expect(decideAccess(request("127.0.0.1"), undefined)).toEqual({ ok: true });
    expect(decideAccess(request("::ffff:127.0.0.1"), undefined)).toEqual({ ok: true });
    expect(decideAccess(request("::1"), undefined)).toEqual({ ok: true });
    // With a token, a loopback peer needs it as much as anyone.
    expect(decideAccess(request("127.0.0.1"), TOKEN)).toEqual({ ok: false, status: 401, reason: "no_token" });
    expect(decideAccess(request("10.1.2.3", { authorization: `Bearer ${TOKEN}` }), TOKEN)).toEqual({
      ok: true,
    });
    expect(isLoopback("127.9.9.9")).toBe(true);
    expect(isLoopback("128.0.0.1")).toBe(false);
    expect(isLoopback("::ffff:10.0.0.1")).toBe(false);
    expect(isLoopback(undefined)).toBe(false);
    expect(tokenMatches(TOKEN, TOKEN)).toBe(true);
    expect(tokenMatches(TOKEN, `${TOKEN}0`)).toBe(false);
    expect(tokenMatches(TOKEN, "")).toBe(false);
  });

  it("reads PARLEY_METRICS_TOKEN from $PARLEY_HOME/.env (parley start)", async () => {
    const home = freshHome();
    writeFileSync(join(home, ".env"), `PARLEY_METRICS_TOKEN=${TOKEN}\n`, { mode: 0o600 });
    let stop: (signal: string) => void = () => {};
    const lines: string[] = [];
    const exit = runCli(["start", "--port", "0"], {
      out: (l) => lines.push(l),
      err: () => {},
      env: { PARLEY_HOME: home, DEMO_AGENT_SPEED: "0" },
      cwd: home,
      stopSignal: () => new Promise((resolve) => (stop = resolve)),
    });
    await vi.waitFor(() => expect(lines.some((l) => l.includes("?token="))).toBe(true), { timeout: 20_000 });
    const base = new URL(/http:\/\/\S+/.exec(lines.join("\n"))?.[0] ?? "").origin;
    expect((await get(base, "/metrics")).status).toBe(401);
    expect((await get(base, "/metrics", { authorization: `Bearer ${TOKEN}` })).status).toBe(200);
    stop("SIGTERM");
    expect(await exit).toBe(0);
  }, 60_000);
});
