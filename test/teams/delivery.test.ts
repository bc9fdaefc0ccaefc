/**
 * The Connector edge: 429 and 412 retried as specified (Retry-After, else exponential, on the
 * injected clock), a failure raised typed, 403/404 retiring the route and 500 not, the token sent
 * to no host but an allowed Connector host, no redirect followed, at most ~7 calls a second per
 * conversation. Unit tests drive ConnectorHttp directly against the fake (a real HTTPS Connector);
 * the channel tests go through the whole stack.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { MemoryLogger } from "../../src/messaging/base/logger.js";
import { ConnectorHttp, ConversationPacer, retryAfterMs } from "../../src/teams/connector-http.js";
import { TeamsSendError } from "../../src/teams/errors.js";
import { connectorHostGate } from "../../src/teams/transport.js";
import { FakeTeams } from "../fakes/teams/server.js";
import { ManualClock } from "../helpers/manual-clock.js";
import type { Stack } from "./helpers.js";
import { done, seen, startStack, text } from "./helpers.js";

let stack: Stack | undefined;
let fake: FakeTeams | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
  await fake?.close();
  fake = undefined;
});

/** A request as the SDK's pipeline hands it over (the fields ConnectorHttp reads). */
function request(url: string, token: string, body: unknown = { type: "message", text: "hi" }) {
  const headers = new Map<string, string>([
    ["authorization", `Bearer ${token}`],
    ["content-type", "application/json"],
  ]);
  return {
    url,
    method: "POST",
    body: JSON.stringify(body),
    headers: { rawHeaders: () => Object.fromEntries(headers) },
  } as never;
}

async function unit(clock = new ManualClock()) {
  fake = await new FakeTeams().start();
  const token = fake.issueToken();
  const http = new ConnectorHttp({
    admits: connectorHostGate([fake.connectorHost]).admits,
    clock,
    logger: new MemoryLogger(),
    backoffMs: 1000,
    minGapMs: 150,
  });
  const url = `${fake.serviceUrl}v3/conversations/a%3Aone/activities`;
  return { fake, http, url, token, clock };
}

/** Run `work` while advancing the manual clock until it settles. */
async function drive<T>(clock: ManualClock, work: Promise<T>): Promise<T> {
  let settled = false;
  const watched = work.finally(() => {
    settled = true;
  });
  while (!settled) {
    await clock.advance(50);
    await new Promise((r) => setTimeout(r, 2));
  }
  return watched;
}

describe("teams: the Connector edge", () => {
  it("429 is retried after Retry-After, 412 after the exponential step, on the injected clock", async () => {
    const u = await unit();
    u.fake.failNext({ path: /activities$/, status: 429, retryAfter: "2" });
    u.fake.failNext({ path: /activities$/, status: 412 });
    const started = u.clock.now();
    const res = await drive(u.clock, u.http.sendRequest(request(u.url, u.token)));
    expect(res.status).toBe(201);
    expect(u.fake.calls.map((c) => c.status)).toEqual([429, 412, 201]);
    // Two seconds for the 429, then one backoff step (1 s) for the 412.
    expect(u.clock.now() - started).toBeGreaterThanOrEqual(3000);
  });

  it("retries stop after maxRetries: the failure is raised typed, with its status", async () => {
    const u = await unit();
    u.fake.failNext({ path: /activities$/, status: 502, times: 4 });
    const error = await drive(
      u.clock,
      u.http.sendRequest(request(u.url, u.token)).catch((e: unknown) => e),
    );
    expect(error).toBeInstanceOf(TeamsSendError);
    expect((error as TeamsSendError).status).toBe(502);
    expect(u.fake.calls).toHaveLength(4);
  });

  it("500, 403 and 404 are not retried", async () => {
    for (const status of [500, 403, 404]) {
      const u = await unit();
      u.fake.failNext({ path: /activities$/, status });
      const error = await u.http.sendRequest(request(u.url, u.token)).catch((e: unknown) => e);
      expect((error as TeamsSendError).status).toBe(status);
      expect((error as TeamsSendError).retiresRoute).toBe(status !== 500);
      expect(u.fake.calls).toHaveLength(1);
      await u.fake.close();
      fake = undefined;
    }
  });

  it("a URL off the allowed Connector hosts is refused before anything is sent", async () => {
    const u = await unit();
    const decoy = await u.fake.decoyOrigin();
    const error = await u.http
      .sendRequest(request(`${decoy}/amer/v3/conversations/a/activities`, u.token))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TeamsSendError);
    expect((error as TeamsSendError).message).toContain("not an allowed Connector host");
    expect(u.fake.decoyRequests).toEqual([]);
    // A port is part of the host: the same address on another port is another host.
    expect(connectorHostGate(["127.0.0.1:443"]).admits(new URL(u.url))).toBe(false);
    expect(
      connectorHostGate(["smba.trafficmanager.net"]).admits(new URL("https://smba.trafficmanager.net/amer/")),
    ).toBe(true);
    expect(
      connectorHostGate(["smba.trafficmanager.net"]).admits(new URL("http://smba.trafficmanager.net/amer/")),
    ).toBe(false);
    expect(
      connectorHostGate(["smba.trafficmanager.net"]).admits(
        new URL("https://smba.trafficmanager.net.evil.example/"),
      ),
    ).toBe(false);
  });

  it("calls to one conversation are at least the minimum gap apart; another conversation is not held", async () => {
    const clock = new ManualClock();
    const pacer = new ConversationPacer(clock, 150);
    const starts: [string, number][] = [];
    const call = (key: string) =>
      pacer.run(key, async () => {
        await pacer.turn(key);
        starts.push([key, clock.now()]);
      });
    const all = Promise.all([call("a"), call("a"), call("a"), call("b")]);
    await drive(clock, all);
    const a = starts.filter(([k]) => k === "a").map(([, t]) => t);
    expect(a[1]! - a[0]!).toBeGreaterThanOrEqual(150);
    expect(a[2]! - a[1]!).toBeGreaterThanOrEqual(150);
    expect(starts.find(([k]) => k === "b")?.[1]).toBe(a[0]);
  });

  it("Retry-After reads seconds and HTTP dates", () => {
    expect(retryAfterMs("3", 0)).toBe(3000);
    expect(retryAfterMs(new Date(10_000).toUTCString(), 4000)).toBe(6000);
    expect(retryAfterMs("soon", 0)).toBeUndefined();
    expect(retryAfterMs(null, 0)).toBeUndefined();
  });
});

describe("teams: failed sends in the channel", () => {
  it("a 403 on a send retires the stored route; a 500 does not", async () => {
    stack = await startStack({
      turns: [
        [text("first answer"), done],
        [text("second answer"), done],
      ],
      overrides: { connector: { backoffMs: 1 } },
    });
    const { driver, alice, fake, parley, audit } = stack;
    const conversation = fake.personalConversation(alice);
    fake.failNext({ method: "POST", path: /\/activities\//, body: /first answer/, status: 500 });
    await driver.post(driver.message(alice, "one"));
    await vi.waitFor(() => expect(fake.calls.some((c) => c.status === 500)).toBe(true));
    await vi.waitFor(() => expect(stack?.sessions.isBusy(stack.startedKeys[0] ?? "")).toBe(false));
    expect(await parley.routes.get("teams", conversation)).toBeDefined();
    expect(stack.running.routes.get(conversation)).toBeDefined();
    fake.failNext({ method: "POST", path: /\/activities\//, body: /second answer/, status: 403 });
    await driver.post(driver.message(alice, "two"));
    await vi.waitFor(async () => expect(await parley.routes.get("teams", conversation)).toBeUndefined());
    expect(stack.running.routes.get(conversation)).toBeUndefined();
    expect(audit.find("teams_route", "revoked").map((r) => r.fields.reason)).toEqual(["connector_403"]);
    // Nothing proactive goes there any more.
    expect(await stack.running.transport.sendMessage(conversation, "anyone?")).toBe("");
  });

  it("a 429 on an answer is waited out and the answer lands", async () => {
    stack = await startStack({ turns: [[text("after the wait"), done]] });
    const { driver, alice, fake } = stack;
    fake.failNext({
      method: "POST",
      path: /\/activities\//,
      body: /after the wait/,
      status: 429,
      retryAfter: "0",
    });
    await driver.post(driver.message(alice, "one"));
    await seen(fake, "after the wait");
    expect(fake.calls.filter((c) => c.status === 429)).toHaveLength(1);
  });
});
