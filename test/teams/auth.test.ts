/**
 * The perimeter, against the real SDK path: the fake signs activities with its keys, parley's
 * endpoint hands them to botbuilder's CloudAdapter, which fetches the fake's OpenID metadata and
 * JWKS and validates. A bad or missing token gets 401, an audit row, and starts nothing (no agent,
 * no Connector call); a valid token from Web Chat or Direct Line is refused; a forged serviceUrl
 * receives nothing; the app password reaches the login URL only, and the Connector token the
 * Connector host only.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { TokenOptions } from "../fakes/teams/driver.js";
import type { Stack } from "./helpers.js";
import { done, seen, startStack, text } from "./helpers.js";

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

/** Nothing acted: no agent started, no Connector call made, nothing shown. */
function nothingStarted(s: Stack): void {
  expect(s.startedKeys).toEqual([]);
  expect(s.fake.calls).toEqual([]);
  expect(s.fake.allShown()).toEqual([]);
}

describe("teams: inbound tokens", () => {
  it("a missing Authorization header is 401 with an audit row, and nothing starts", async () => {
    stack = await startStack({ turns: [[text("never"), done]] });
    const { driver, alice } = stack;
    const res = await driver.post(driver.message(alice, "hello"), { token: null });
    expect(res.status).toBe(401);
    expect(stack.audit.find("teams_inbound", "denied").map((r) => r.fields.reason)).toEqual([
      "missing_token",
    ]);
    nothingStarted(stack);
  });

  const forged: [string, TokenOptions | string][] = [
    ["signed by a key the JWKS does not publish", { key: "rogue" }],
    ["signed by a key endorsed only for Web Chat and Direct Line", { key: "webchat" }],
    ["for another app (audience)", { aud: "00000000-0000-0000-0000-000000000000" }],
    ["from another issuer", { iss: "https://sts.windows.net/attacker/" }],
    ["expired beyond the five minutes' skew", { expiresIn: -6 * 60 }],
    ["naming another serviceurl than the activity", { serviceUrl: "https://127.0.0.1:1/amer/" }],
    ["with alg none", { alg: "none" }],
    ["that is not a JWT at all", "not.a-token"],
  ];
  for (const [name, opts] of forged) {
    it(`a token ${name} is 401 with an audit row, and nothing starts`, async () => {
      stack = await startStack({ turns: [[text("never"), done]] });
      const { driver, alice } = stack;
      const activity = driver.message(alice, "hello");
      const res = await driver.post(
        activity,
        typeof opts === "string" ? { token: opts } : { tokenOptions: opts },
      );
      expect(res.status).toBe(401);
      expect(stack.audit.find("teams_inbound", "denied").map((r) => r.fields.reason)).toEqual([
        "invalid_token",
      ]);
      nothingStarted(stack);
    });
  }

  it("a token expired less than five minutes ago is still accepted (the documented skew)", async () => {
    stack = await startStack({ turns: [[text("within the skew"), done]] });
    const { driver, alice, fake } = stack;
    const res = await driver.post(driver.message(alice, "hello"), { tokenOptions: { expiresIn: -4 * 60 } });
    expect(res.status).toBe(200);
    await seen(fake, "within the skew");
  });

  it("an unknown key id refetches the keys at most once per interval (the SDK's damper)", async () => {
    stack = await startStack({ turns: [[text("ok"), done]] });
    const { driver, alice, fake } = stack;
    expect((await driver.post(driver.message(alice, "hello"))).status).toBe(200);
    await seen(fake, "ok");
    const fetched = fake.jwksFetches;
    for (let i = 0; i < 5; i += 1)
      expect(
        (await driver.post(driver.message(alice, "x"), { tokenOptions: { key: "rogue", kid: `bogus-${i}` } }))
          .status,
      ).toBe(401);
    expect(fake.jwksFetches).toBe(fetched);
  });

  it("a body over the cap is refused before it is parsed", async () => {
    stack = await startStack();
    const { driver, alice } = stack;
    const res = await driver.post(driver.message(alice, "x".repeat(300 * 1024)));
    expect(res.status).toBe(413);
    expect(stack.audit.find("teams_inbound", "denied").map((r) => r.fields.reason)).toEqual([
      "body_too_large",
    ]);
    nothingStarted(stack);
  });
});

describe("teams: what a valid token does not prove", () => {
  for (const channelId of ["webchat", "directline"]) {
    it(`a ${channelId} activity with a valid token is refused and audited`, async () => {
      stack = await startStack({ turns: [[text("never"), done]] });
      const { driver, alice } = stack;
      const res = await driver.post({ ...driver.message(alice, "hello"), channelId });
      // Refused, not swallowed: the sender's channel shows a failed send.
      expect(res.status).toBe(403);
      expect(stack.audit.find("inbound", "denied").map((r) => r.fields.reason)).toEqual([
        "channel_not_msteams",
      ]);
      nothingStarted(stack);
    });
  }

  it("a forged serviceUrl (validly signed for it) receives nothing, not even a token", async () => {
    stack = await startStack({ turns: [[text("never"), done]] });
    const { driver, alice, fake } = stack;
    const decoy = `${await fake.decoyOrigin()}/amer/`;
    const res = await driver.post(
      { ...driver.message(alice, "hello"), serviceUrl: decoy },
      { tokenOptions: { serviceUrl: decoy } },
    );
    expect(res.status).toBe(403);
    expect(stack.audit.find("inbound", "denied").map((r) => r.fields.reason)).toEqual([
      "service_url_not_allowed",
    ]);
    expect(fake.decoyRequests).toEqual([]);
    expect(fake.tokenRequests).toEqual([]);
    nothingStarted(stack);
  });

  it("the password goes only to the login URL, the Connector token only to the Connector host", async () => {
    stack = await startStack({ turns: [[text("answered"), done]] });
    const { driver, alice, fake } = stack;
    await fake.decoyOrigin();
    expect((await driver.post(driver.message(alice, "hello"))).status).toBe(200);
    await seen(fake, "answered");
    expect(fake.tokenRequests).toEqual([
      {
        path: "/botframework.com/oauth2/v2.0/token",
        clientId: fake.appId,
        secretOk: true,
        scope: "https://api.botframework.com/.default",
      },
    ]);
    expect(fake.calls.length).toBeGreaterThan(0);
    expect(fake.calls.every((c) => c.auth === "issued")).toBe(true);
    expect(fake.decoyRequests).toEqual([]);
  });
});
