/**
 * Files users send on Teams, end to end against the fake: a shared file (file.download.info) is
 * fetched with no credential, a pasted image on the Connector with the bot's token, and nothing else
 * gets the token. A host that is not a Connector host is vetted by name and by every address it
 * resolves to (a private one is never fetched, directly or by redirect), at most three redirects are
 * followed, the bytes read are capped, and an unknown attachment is named by type and never fetched.
 * Address vetting is also pinned as a pure rule (isPublicAddress).
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { PromptContent } from "../../src/messaging/turn/provider-events.js";
import { isPublicAddress, pinnedLookup } from "../../src/teams/attachments.js";
import type { Stack } from "./helpers.js";
import { done, seen, startStack, text } from "./helpers.js";

const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
);

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

const blocks = (p: string | PromptContent[] | undefined): PromptContent[] => (Array.isArray(p) ? p : []);
const footer = (s: Stack) => seen(s.fake, /Finished in \d+s/);

describe("teams: files from users", () => {
  it("a shared file is fetched with no credential and its text reaches the agent", async () => {
    stack = await startStack({ turns: [[text("Summarized."), done]] });
    const { fake, driver, alice } = stack;
    const notes = "# Plan\n- ship Teams\n";
    const url = fake.hostFile({ bytes: Buffer.from(notes), contentType: "text/markdown" });
    await driver.post(driver.fileMessage(alice, "plan.md", url, "summarize"));
    await footer(stack);
    expect(blocks(stack.provider.prompts[0])).toContainEqual({
      type: "text",
      text: `Contents of the attached file plan.md:\n${notes}`,
    });
    expect(fake.fileRequests).toHaveLength(1);
    expect(fake.fileRequests[0]?.authorization).toBeUndefined();
  });

  it("a pasted image on the Connector is fetched with the bot's token", async () => {
    stack = await startStack({ turns: [[text("A pixel."), done]] });
    const { fake, driver, alice } = stack;
    Object.assign(stack.provider, { promptCapabilities: { image: true } });
    const url = fake.hostFile({ bytes: PNG, contentType: "image/png" }, "inline");
    await driver.post(driver.imageMessage(alice, url, "what is this?"));
    await footer(stack);
    expect(blocks(stack.provider.prompts[0])).toContainEqual({
      type: "image",
      mimeType: "image/png",
      data: PNG.toString("base64"),
    });
    expect(fake.fileRequests[0]?.authorization).toMatch(/^Bearer fake-access-/);
  });

  it("an inline image on a host resolving to a private address is never fetched, nor one redirecting there", async () => {
    const lookups: string[] = [];
    stack = await startStack({
      turns: [
        [text("Only text."), done],
        [text("Still only text."), done],
      ],
      overrides: {
        files: {
          // What a public name an attacker controls can answer.
          resolve: async (host) => {
            lookups.push(host);
            return [{ address: "169.254.169.254", family: 4 }];
          },
        },
      },
    });
    const { fake, driver, alice } = stack;
    await driver.post(driver.imageMessage(alice, "https://images.attacker.example/latest/meta-data", "look"));
    await seen(fake, "resolves to a private address");
    expect(lookups).toEqual(["images.attacker.example"]);
    await vi.waitFor(() => expect(stack?.sessions.isBusy(stack.startedKeys[0] ?? "")).toBe(false));
    // A Connector-hosted image redirecting to a loopback address: the hop is refused before any request.
    const decoy = await fake.decoyOrigin();
    const redirected = fake.hostFile({ redirectTo: `${decoy}/internal` }, "inline");
    await driver.post(driver.imageMessage(alice, redirected, "and this"));
    // 127.0.0.1 on another port: refused for the port and for being a bare address, before any request.
    await seen(
      fake,
      /Could not read image\.png: the file could not be fetched \(the download address names a non-default port\)/,
    );
    expect(fake.decoyRequests).toEqual([]);
    expect(fake.fileRequests).toHaveLength(1);
  });

  it("a bare IP, a non-default port, a local name and plain http are refused by name alone", async () => {
    const lookups: string[] = [];
    stack = await startStack({
      turns: [[text("ok"), done]],
      overrides: {
        files: {
          resolve: async (host) => {
            lookups.push(host);
            return [{ address: "8.8.8.8", family: 4 }];
          },
        },
      },
    });
    const { fake, driver, alice } = stack;
    const message = driver.message(alice, "four files", {
      extra: {
        attachments: [
          { contentType: "image/png", contentUrl: "https://10.0.0.5/a.png", name: "a.png" },
          { contentType: "image/png", contentUrl: "https://files.example.com:8443/b.png", name: "b.png" },
          { contentType: "image/png", contentUrl: "https://printer.local/c.png", name: "c.png" },
          { contentType: "image/png", contentUrl: "http://files.example.com/d.png", name: "d.png" },
        ],
      },
    });
    await driver.post(message);
    await footer(stack);
    const shown = fake
      .allShown()
      .map((m) => m.text)
      .join("\n");
    expect(shown).toContain("bare IP address");
    expect(shown).toContain("non-default port");
    expect(shown).toContain("local name");
    expect(shown).toContain("only HTTPS downloads are allowed");
    expect(lookups).toEqual([]);
  });

  it("more than three redirects are not followed", async () => {
    stack = await startStack({ turns: [[text("ok"), done]] });
    const { fake, driver, alice } = stack;
    let url = fake.hostFile({ bytes: Buffer.from("end") }, "inline");
    for (let i = 0; i < 4; i += 1) url = fake.hostFile({ redirectTo: url }, "inline");
    await driver.post(driver.imageMessage(alice, url, "follow me"));
    await seen(fake, "redirected more than 3 times");
    expect(fake.fileRequests).toHaveLength(4);
  });

  it("an attachment of an unknown kind is named by its type and never fetched", async () => {
    stack = await startStack({ turns: [[text("ok"), done]] });
    const { fake, driver, alice } = stack;
    await driver.post(
      driver.message(alice, "see attached", {
        extra: {
          attachments: [
            {
              contentType: "application/x-mystery",
              contentUrl: fake.hostFile({ bytes: Buffer.from("x") }),
              name: "secret-plans.bin",
            },
          ],
        },
      }),
    );
    await seen(fake, "Teams sent a application/x-mystery attachment, which is not read");
    expect(fake.fileRequests).toEqual([]);
  });
});

describe("teams: the socket dials what was vetted", () => {
  it("the connection's lookup answers the vetted host with the vetted addresses, and nothing else", () => {
    const lookup = pinnedLookup("files.example.com.", [
      { address: "203.0.113.7", family: 4 },
      { address: "2001:db8::7", family: 6 },
    ]);
    const calls: unknown[][] = [];
    const record = (...args: unknown[]) => calls.push(args);
    lookup("FILES.example.com", { all: true }, record);
    lookup("files.example.com", {}, record);
    lookup("rebound.example.com", {}, record);
    expect(calls[0]).toEqual([
      null,
      [
        { address: "203.0.113.7", family: 4 },
        { address: "2001:db8::7", family: 6 },
      ],
    ]);
    expect(calls[1]).toEqual([null, "203.0.113.7", 4]);
    expect(String(calls[2]?.[0])).toContain("not vetted");
  });
});

describe("teams: which addresses are public", () => {
  it.each([
    ["8.8.8.8", true],
    ["2001:4860:4860::8888", true],
    ["127.0.0.1", false],
    ["10.1.2.3", false],
    ["172.20.0.1", false],
    ["192.168.1.1", false],
    ["169.254.169.254", false],
    ["100.64.0.1", false],
    ["0.0.0.0", false],
    ["224.0.0.1", false],
    ["::1", false],
    ["::", false],
    ["fe80::1", false],
    ["fd00::1", false],
    ["::ffff:127.0.0.1", false],
    ["::ffff:8.8.8.8", true],
    ["64:ff9b::a9fe:a9fe", false],
    ["not an address", false],
  ])("%s public: %s", (address, expected) => {
    expect(isPublicAddress(address)).toBe(expected);
  });
});
