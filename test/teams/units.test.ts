/**
 * The pure parts of the Teams channel, pinned: the display form (headings, HTML, the caps in code
 * points and bytes), quote-reply unwrapping, the strict card-press grammar, the identity rule, the
 * gate order, the settings a typo or an http origin cannot slip through.
 */
import { describe, expect, it } from "vitest";
import { channelSettingsOf } from "../../src/gateway/config.js";
import { ChoiceBook, parseSubmit } from "../../src/teams/cards.js";
import type { TeamsMember } from "../../src/teams/client.js";
import { manifestCommands } from "../../src/teams/commands.js";
import { fitTeams, neutralizeHtml, quietLine, teamsMarkdown, teamsSafe } from "../../src/teams/format.js";
import { teamsChannel } from "../../src/teams/index.js";
import { TeamsPeople } from "../../src/teams/people.js";
import { messageText, quotedReplyText } from "../../src/teams/quote.js";
import { connectorHostGate, gateRefusal } from "../../src/teams/transport.js";
import type { TeamsActivity } from "../../src/teams/wire.js";

describe("teams display form", () => {
  it("headings become bold lines outside code; fenced code is left alone", () => {
    expect(teamsMarkdown("# Title\n\ntext\n### Sub ###\n```\n# not a heading\n```")).toBe(
      "**Title**\n\ntext\n**Sub**\n```\n# not a heading\n```",
    );
  });

  it("< is an entity outside code, literal inside it", () => {
    expect(neutralizeHtml("a <b>x</b> `<i>` b\n```\n<tag>\n```\n<at>")).toBe(
      "a &lt;b>x&lt;/b> `<i>` b\n```\n<tag>\n```\n&lt;at>",
    );
  });

  it("teamsSafe redacts what the rendered form shows", () => {
    const out = teamsSafe("key: AKIAQ7ZR3M**5TXW2KP9VB** and <b>bold</b>");
    expect(out.replace(/[*`_\\]/g, "")).not.toContain("AKIAQ7ZR3M5TXW2KP9VB");
    expect(out).not.toContain("<b>");
  });

  it("a status line is italic, one line, with its own delimiters escaped", () => {
    expect(quietLine("🔧 rm *.log\nand more")).toBe("_🔧 rm \\*.log and more_");
    expect(quietLine("")).toBe("");
  });

  it("fitTeams bounds code points and UTF-8 bytes, keeping fences balanced", () => {
    const wide = `\`\`\`\n${"漢".repeat(9000)}\n${"字".repeat(9000)}\n\`\`\``;
    const pieces = fitTeams(wide);
    expect(pieces.length).toBeGreaterThan(1);
    for (const p of pieces) {
      expect(Array.from(p).length).toBeLessThanOrEqual(16_000);
      expect(Buffer.byteLength(p)).toBeLessThanOrEqual(24_000);
      expect((p.match(/^```/gm) ?? []).length % 2).toBe(0);
    }
    expect(pieces.join("").replace(/```\n?/g, "")).toContain("漢".repeat(10));
    const emoji = "😀".repeat(7000);
    for (const p of fitTeams(emoji)) expect(p).not.toMatch(/^[\udc00-\udfff]|[\ud800-\udbff]$/);
  });
});

describe("teams quote-replies", () => {
  const html = (words: string) =>
    `<blockquote itemscope="" itemtype="http://schema.skype.com/Reply" itemid="1"><strong>parley</strong><p>old answer</p></blockquote><p>${words}</p>`;

  it("the user's own words follow the Reply blockquote; entities decoded, tags dropped", () => {
    expect(
      quotedReplyText({
        attachments: [{ contentType: "text/html", content: html("/stop &amp; <b>now</b>") }],
      }),
    ).toBe("/stop & now");
  });

  it("anything else falls back to the activity's text", () => {
    expect(
      messageText({ text: "hello", attachments: [{ contentType: "text/html", content: "<p>hello</p>" }] }),
    ).toBe("hello");
    expect(messageText({ text: "plain" })).toBe("plain");
  });
});

describe("teams card presses", () => {
  it("only the exact shapes parley minted parse; anything extra or malformed is refused", () => {
    expect(parseSubmit({ parley: "approval", r: "r1", n: "abc", v: "approve" })).toEqual({
      parley: "approval",
      r: "r1",
      n: "abc",
      v: "approve",
    });
    expect(parseSubmit({ parley: "option", i: 2 })).toEqual({ parley: "option", i: 2 });
    for (const bad of [
      null,
      "approve",
      { parley: "approval", r: "r1", n: "abc", v: "approve_always" },
      { parley: "approval", r: "r1", n: "abc", v: "approve", label: "extra" },
      { parley: "option", i: -1 },
      { parley: "option", i: "0" },
      { parley: "option", i: 0, label: "/new" },
      { parley: "session", h: "short", i: 0 },
      { parley: "model", key: "gpt" },
    ])
      expect(parseSubmit(bad)).toBeNull();
  });

  it("a chip resolves once, in its own conversation, against what was offered", () => {
    const book = new ChoiceBook(2);
    book.register("c1", "a:1", ["yes", "no"]);
    expect(book.take("c1", "a:2", 0)).toBeNull();
    expect(book.take("c1", "a:1", 5)).toBeNull();
    expect(book.take("c1", "a:1", 1)).toBe("no");
    expect(book.take("c1", "a:1", 1)).toBeNull();
    book.register("c2", "a:1", ["x"]);
    book.register("c3", "a:1", ["y"]);
    book.register("c4", "a:1", ["z"]);
    expect(book.take("c2", "a:1", 0)).toBeNull();
  });
});

describe("teams identities", () => {
  const member = (m: Partial<TeamsMember>) => async (): Promise<TeamsMember> => ({ id: "29:x", ...m });
  const clock = { now: () => 0 };

  it("picks the form the list authorizes: the UPN when both match, the object id when only it does", async () => {
    const aad = "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee";
    const both = new TeamsPeople({ allowed: new Set(["ann@contoso.example", aad]), clock });
    expect(
      await both.resolve(
        { id: "29:a", aadObjectId: aad.toUpperCase() },
        member({ userPrincipalName: "Ann@Contoso.example" }),
      ),
    ).toEqual({
      identity: "ann@contoso.example",
      authorized: true,
    });
    const byId = new TeamsPeople({ allowed: new Set(["bob@contoso.example", aad]), clock });
    expect(
      await byId.resolve(
        { id: "29:b", aadObjectId: aad },
        member({ userPrincipalName: "guest@other.example" }),
      ),
    ).toEqual({
      identity: aad,
      authorized: true,
    });
    expect(
      await byId.resolve(
        { id: "29:c", aadObjectId: "ffffffff-bbbb-cccc-dddd-eeeeeeeeeeee" },
        member({ email: "eve@x.example" }),
      ),
    ).toEqual({
      identity: "eve@x.example",
      authorized: false,
    });
  });

  it("a failed lookup decides nothing when the answer depends on it", async () => {
    const people = new TeamsPeople({ allowed: new Set(["ann@contoso.example"]), clock });
    expect(
      await people.resolve({ id: "29:a" }, async () => {
        throw new Error("403");
      }),
    ).toBeNull();
  });
});

describe("teams gates", () => {
  const gate = connectorHostGate(["smba.trafficmanager.net"]);
  const activity = (o: Partial<TeamsActivity> = {}): TeamsActivity => ({
    type: "message",
    channelId: "msteams",
    serviceUrl: "https://smba.trafficmanager.net/amer/",
    from: { id: "29:a" },
    conversation: { id: "a:1", conversationType: "personal" },
    ...o,
  });

  it("channel first, then the serviceUrl's host, then its claim, then the scope", () => {
    const claim = "https://smba.trafficmanager.net/amer/";
    expect(gateRefusal(activity(), claim, gate)).toBeNull();
    expect(
      gateRefusal(activity({ channelId: "webchat", serviceUrl: "https://evil.example/" }), claim, gate),
    ).toBe("channel_not_msteams");
    expect(
      gateRefusal(activity({ serviceUrl: "https://evil.example/" }), "https://evil.example/", gate),
    ).toBe("service_url_not_allowed");
    expect(gateRefusal(activity({ serviceUrl: "http://smba.trafficmanager.net/amer/" }), claim, gate)).toBe(
      "service_url_not_allowed",
    );
    expect(gateRefusal(activity({ serviceUrl: "https://smba.trafficmanager.net/emea/" }), claim, gate)).toBe(
      "service_url_claim_mismatch",
    );
    expect(
      gateRefusal(activity({ conversation: { id: "19:x", conversationType: "groupChat" } }), claim, gate),
    ).toBe("not_personal");
    expect(gateRefusal(activity({ conversation: { id: "19:x" } }), claim, gate)).toBe("not_personal");
  });
});

describe("teams settings", () => {
  const parse = (section: Record<string, unknown>, env: Record<string, string> = {}) =>
    channelSettingsOf(teamsChannel, section, env);

  it("defaults to Microsoft's origins and lowercases identities and hosts", () => {
    const s = parse({
      allowedUsers: ["Ann@Contoso.Example"],
      connectorHosts: ["SMBA.trafficmanager.net"],
    }) as Record<string, unknown>;
    expect(s).toMatchObject({
      appType: "MultiTenant",
      listen: "127.0.0.1:3978",
      loginUrl: "https://login.microsoftonline.com",
      tokenIssuer: "https://api.botframework.com",
      allowedUsers: ["ann@contoso.example"],
      connectorHosts: ["smba.trafficmanager.net"],
      maxInflightTurns: 8,
    });
  });

  it("refuses an http origin, an identity no sender could have, and a typo", () => {
    expect(() => parse({ openIdMetadataUrl: "http://keys.example/" })).toThrow(/not an https URL/);
    expect(() => parse({ allowedUsers: ["ann"] })).toThrow(/not a UPN/);
    expect(() => parse({ alowedUsers: [] })).toThrow(/alowedUsers/);
  });

  it("TEAMS_CONNECTOR_HOSTS is a comma-separated list", () => {
    const s = parse({}, { TEAMS_CONNECTOR_HOSTS: "a.example, b.example:8443" }) as {
      connectorHosts: string[];
    };
    expect(s.connectorHosts).toEqual(["a.example", "b.example:8443"]);
  });

  it("the manifest lists at most ten commands, prefixes left out", () => {
    const commands = manifestCommands();
    expect(commands.length).toBeLessThanOrEqual(10);
    expect(commands.map((c) => c.title)).not.toContain("queue");
    for (const c of commands) expect(c.description.length).toBeLessThanOrEqual(128);
  });
});
