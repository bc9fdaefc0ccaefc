/**
 * probeChannel for a channel whose credential lives in the data home (a linked device's keys)
 * rather than in the environment: off until linked or configured, on once linked, and a configured
 * but unlinked one is incomplete, naming what it lacks. A token channel behaves as before.
 */
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineChannel, probeChannel } from "../../../src/messaging/channel/contract.js";

const schema = z.strictObject({ enabled: z.boolean().optional() });
const linkedHomes = new Set(["/home-linked"]);
const homeCredentialed = defineChannel({
  name: "linked",
  docs: "docs/channels/linked.md",
  configSchema: schema,
  secretEnv: [],
  settingEnv: {},
  credentialsInHome: (home) => linkedHomes.has(home),
  missing: (_s, _env, home) => (home !== undefined && linkedHomes.has(home) ? [] : ["a linked account"]),
  load: async () => ({ start: async () => ({ name: "linked", stop: async () => {} }) }),
});
const tokenChannel = defineChannel({
  name: "token",
  docs: "docs/channels/token.md",
  configSchema: schema,
  secretEnv: ["TOKEN"],
  settingEnv: {},
  missing: (_s, env) => (env.TOKEN ? [] : ["TOKEN"]),
  load: async () => ({ start: async () => ({ name: "token", stop: async () => {} }) }),
});

describe("probeChannel with a credential in the data home", () => {
  it("is off, saying how to link, until linked or configured", () => {
    expect(probeChannel(homeCredentialed, {}, {}, false, "/home-empty")).toEqual({
      status: "disabled",
      note: "link it to enable (parley linked link)",
    });
  });

  it("is on once linked, without any section", () => {
    expect(probeChannel(homeCredentialed, {}, {}, false, "/home-linked")).toEqual({ status: "configured" });
  });

  it("configured but not linked is incomplete; enabled false wins over a link", () => {
    expect(probeChannel(homeCredentialed, {}, {}, true, "/home-empty")).toEqual({
      status: "incomplete",
      missing: ["a linked account"],
    });
    expect(probeChannel(homeCredentialed, { enabled: false }, {}, true, "/home-linked")).toEqual({
      status: "disabled",
    });
  });

  it("a token channel ignores the home", () => {
    expect(probeChannel(tokenChannel, {}, {}, false, "/home-linked")).toEqual({
      status: "disabled",
      note: "set TOKEN to enable",
    });
    expect(probeChannel(tokenChannel, {}, { TOKEN: "t" }, false)).toEqual({ status: "configured" });
  });
});
