/**
 * The `whatsapp` section: deny-by-default defaults, and the values that can never work refused at
 * load with the key named (a phone number that is not E.164 could never match a sender; a group
 * key that is not a JID could never match a group; plain ws:// off loopback would carry media in
 * the clear).
 */
import { describe, expect, it } from "vitest";
import { WHATSAPP_WS_URL, whatsappChannel, whatsappSettingsSchema } from "../../src/whatsapp/index.js";

const parse = (v: unknown) => whatsappSettingsSchema.safeParse(v);
const issues = (v: unknown) => {
  const r = parse(v);
  return r.success ? [] : r.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
};

describe("whatsapp settings", () => {
  it("default to the operator's self-chat only, WhatsApp's socket, no groups", () => {
    expect(whatsappSettingsSchema.parse({})).toMatchObject({
      dmPolicy: "self",
      allowFrom: [],
      groups: {},
      webSocketUrl: WHATSAPP_WS_URL,
      maxCatchUpMinutes: 15,
      dmScope: "per-channel-peer",
    });
  });

  it("refuse a policy, number, group or socket URL that could never work", () => {
    expect(issues({ dmPolicy: "everyone" })[0]).toMatch(/^dmPolicy:/);
    expect(issues({ allowFrom: ["017012345678"] })).toEqual([
      "allowFrom.0: not an E.164 phone number (+4917012345678)",
    ]);
    expect(issues({ groups: { "Family chat": { mode: "mention" } } })[0]).toMatch(/^groups/);
    expect(issues({ groups: { "120363000000000001@g.us": { mode: "always" } } })[0]).toMatch(
      /^groups\.120363000000000001@g\.us\.mode:/,
    );
    expect(issues({ webSocketUrl: "ws://gateway.example/ws" })).toEqual([
      "webSocketUrl: ws:// only on loopback (127.0.0.1, localhost, [::1]); use wss://",
    ]);
    expect(issues({ webSocketUrl: "https://web.whatsapp.com" })[0]).toMatch(/not a ws\(s\) URL/);
    expect(parse({ webSocketUrl: "wss://relay.example/ws/chat" }).success).toBe(true);
    expect(parse({ webSocketUrl: "ws://127.0.0.1:8080/ws/chat" }).success).toBe(true);
  });

  it("marks who-may-talk and where-it-connects as security keys; takes no token", () => {
    expect(whatsappChannel.securityKeys).toEqual([
      "webSocketUrl",
      "proxyUrl",
      "dmPolicy",
      "allowFrom",
      "groups",
    ]);
    expect(whatsappChannel.secretEnv).toEqual([]);
    expect(whatsappChannel.settingEnv).toEqual({
      webSocketUrl: "WHATSAPP_WS_URL",
      proxyUrl: "WHATSAPP_PROXY_URL",
      webVersion: "WHATSAPP_WEB_VERSION",
    });
  });
});
