/**
 * Where Webex's settings come from and what they admit: the origin variables (WEBEX_API_URL,
 * WEBEX_U2C_URL, WEBEX_WDM_URL) laid over the config, a pin off Webex's domains refused, and a U2C
 * catalog naming a WDM host outside the allowed ones refused before the token goes there. Also the
 * bot's leading mention, stripped on a word boundary only.
 */
import { describe, expect, it } from "vitest";
import { channelSettingsOf } from "../../src/gateway/config.js";
import type { WebexSettings } from "../../src/webex/index.js";
import { WEBEX_API_URL, webexChannel } from "../../src/webex/index.js";
import { stripLeadingMention } from "../../src/webex/intake.js";
import { webexLab } from "./harness.js";

const lab = webexLab();

const settings = (section: unknown, env: Record<string, string> = {}) =>
  channelSettingsOf(webexChannel, section, env) as WebexSettings;

describe("webex settings", () => {
  it("the origin variables override the config; an empty WDM pin means discover", () => {
    const base = settings({ allowedEmails: ["Alice@Example.com"] });
    expect(base.apiUrl).toBe(WEBEX_API_URL);
    expect(base.wdmUrl).toBe("");
    expect(base.allowedEmails).toEqual(["alice@example.com"]);
    const s = settings(
      { apiUrl: "https://api.corp.example/v1" },
      {
        WEBEX_API_URL: "https://webexapis.com/v1/",
        WEBEX_U2C_URL: "https://u2c.wbx2.com/u2c/api/v1",
        WEBEX_WDM_URL: "https://wdm-a.wbx2.com/wdm/api/v1/",
      },
    );
    expect(s.apiUrl).toBe("https://webexapis.com/v1");
    expect(s.u2cUrl).toBe("https://u2c.wbx2.com/u2c/api/v1");
    expect(s.wdmUrl).toBe("https://wdm-a.wbx2.com/wdm/api/v1");
  });

  it("a WEBEX_WDM_URL off Webex's domains, or plain http off loopback, is refused", () => {
    expect(() => settings({}, { WEBEX_WDM_URL: "https://wdm.example.com/wdm" })).toThrow(/must be under/);
    expect(() => settings({}, { WEBEX_WDM_URL: "http://wdm-a.wbx2.com/wdm" })).toThrow(/must be https/);
  });

  it("a catalog naming a WDM host outside the allowed ones stops start; no device is registered", async () => {
    lab.fake.catalogWdmUrl = "https://wdm.evil.example/wdm";
    await expect(lab.channel()).rejects.toThrow(/catalog's WDM host is not allowed/);
    expect(lab.fake.callsTo("POST", /^\/wdm\/devices$/)).toEqual([]);
    expect(lab.fake.calls.every((c) => c.authorized)).toBe(true);
  });
});

describe("the bot's leading mention in a space", () => {
  it("is stripped on a word boundary only, and only at the start", () => {
    expect(stripLeadingMention("parley what is up", ["parley"])).toBe("what is up");
    expect(stripLeadingMention("  Parley, run the tests", ["parley"])).toBe("run the tests");
    expect(stripLeadingMention("parley: status", ["parley"])).toBe("status");
    expect(stripLeadingMention("parleybot is another bot", ["parley"])).toBe("parleybot is another bot");
    expect(stripLeadingMention("ask parley later", ["parley"])).toBe("ask parley later");
    expect(stripLeadingMention("parley", ["parley"])).toBe("");
  });
});
