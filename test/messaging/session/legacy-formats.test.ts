/**
 * The JSON files of an install from before the store, as the one-time import (and doctor) decode
 * them: every malformed shape is an error naming its problem, never a silently dropped row (a lost
 * row is lost state, or a conversation whose resume binding would vanish without a word).
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { decodeStore } from "../../../src/messaging/session/legacy-session-file.js";
import { decodeExpectations } from "../../../src/messaging/session/resume-expectations.js";

const fixture = (rel: string) => new URL(`../../store/fixtures/legacy-install/${rel}`, import.meta.url);

describe("the legacy session file", () => {
  it("decodes what the old store wrote: links, flags, generation, title, cwd, policy", () => {
    const rows = decodeStore(readFileSync(fixture("sessions.json"), "utf8"));
    expect(rows.map((r) => r.sessionKey)).toEqual([
      "telegram:agent:direct:111",
      "webchat:default:direct:aaa111",
    ]);
    expect(rows[0]).toMatchObject({
      generation: 3,
      flags: { private: true },
      muted: { mirror: true },
      mirrorOptOut: true,
      approvalPolicy: "auto",
      originLink: { channelType: "telegram", conversationId: "111" },
    });
    expect(rows[1]).toMatchObject({ title: "Plan the trip", titleKind: "manual", cwd: "/srv/work" });
  });

  it.each([
    ["an empty file", "", /JSON/],
    ["a wrong shape", '{"version":1,"sessions":[]}', /sessions is not an object/],
    ["a bad field", '{"version":1,"sessions":{"k":{"generation":-1}}}', /generation/],
    ["a bad link", '{"version":1,"sessions":{"k":{"originLink":{"channelType":1}}}}', /originLink/],
    ["a newer version", '{"version":99,"sessions":{}}', /unsupported version 99/],
    ["a bad title kind", '{"version":1,"sessions":{"k":{"titleKind":"guess"}}}', /titleKind/],
  ])("rejects %s, naming the problem", (_label, text, problem) => {
    expect(() => decodeStore(text)).toThrow(problem);
  });
});

describe("a legacy resume record file", () => {
  it("decodes what the old store wrote, an absent `retired` reading as active", () => {
    const rows = decodeExpectations(readFileSync(fixture("trust/discord_resume_expectations.json")));
    expect(Object.fromEntries(rows)).toEqual({
      dm1: { key: "webchat:default:direct:aaa111", title: "Plan the trip", version: 1, retired: false },
      dm9: { key: "webchat:default:direct:aaa111", title: "Old", version: 2, retired: true },
    });
    const older = new TextEncoder().encode(JSON.stringify({ c: { key: "k", title: "", version: 1 } }));
    expect(decodeExpectations(older).get("c")?.retired).toBe(false);
  });

  const corrupt: [string, string | Uint8Array, RegExp][] = [
    ["bad JSON", '{"c1": {"key": "webchat:x", ', /not valid JSON/],
    ["an empty file", "", /not valid JSON/],
    ["a top-level array", "[]", /top level/],
    ["a non-integer version", JSON.stringify({ c1: { key: "w", title: "t", version: 1.5 } }), /version/],
    ["a string version", JSON.stringify({ c1: { key: "w", title: "t", version: "2" } }), /version/],
    ["a negative version", JSON.stringify({ c1: { key: "w", title: "t", version: -1 } }), /version/],
    [
      "a non-boolean retired",
      JSON.stringify({ c1: { key: "w", title: "t", version: 1, retired: "yes" } }),
      /retired/,
    ],
    ["a row that is not an object", JSON.stringify({ c1: 3 }), /not an object/],
    ["a missing key", JSON.stringify({ c1: { title: "t", version: 1 } }), /key/],
    ["non-UTF-8 bytes", new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x7b, 0x7d, 0x7d]), /UTF-8/],
  ];
  it.each(corrupt)("rejects %s, naming the problem", (_label, content, problem) => {
    const bytes = typeof content === "string" ? new TextEncoder().encode(content) : content;
    expect(() => decodeExpectations(bytes)).toThrow(problem);
  });

  it("a parse failure does not quote the file's content (the problem text reaches chat)", () => {
    const bytes = new TextEncoder().encode('{"c1": {"key": "webchat:x", "title": "sk-secretvalue", ');
    expect(() => decodeExpectations(bytes)).toThrow(/^is not valid JSON$/);
  });
});
