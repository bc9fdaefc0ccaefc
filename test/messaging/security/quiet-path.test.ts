import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  credentialSpans,
  planCredentials,
  planCredentialsFull,
  planExfiltrationFull,
  planExfiltrationWith,
  quietCredentialCut,
  quietExfiltrationCut,
  redactAll,
} from "../../../src/messaging/security/redact.js";
import {
  containsFixedCredential,
  containsFixedCredentialFull,
} from "../../../src/messaging/security/redaction/exfiltration.js";
import { loudClusters } from "../../../src/messaging/security/redaction/quiet.js";
import { StreamRedactor } from "../../../src/messaging/security/stream-redactor.js";

/**
 * The quiet-text fast paths claim to know the planners' answer without running them.
 * These properties hold them to it: wherever a fast path answers, the full planner
 * plans no span, no warning and exactly the same cut, for every start and both ends.
 */

/** Pieces of prose plus everything next to the fast paths' edges: key names, prefixes, partial URLs, surrogates. */
const ATOMS = [
  "the",
  "quick",
  "well",
  "known",
  " ",
  " ",
  "\n",
  "\t",
  ".",
  ". ",
  ",",
  ":",
  ": ",
  "-",
  "- ",
  "--",
  "-----",
  "-----BEGIN RSA PRIVATE KEY-----\n",
  "|---|",
  "user:pw@",
  "@",
  "a:b",
  "123456",
  "ghp_",
  "sk_live_",
  "Zq9+/Kx7Zq9+/",
  "api_key",
  "secret_key",
  "access_key=",
  "-la",
  "**",
  "`",
  "(",
  ")",
  "[",
  "]",
  "](",
  '"',
  "'",
  "=",
  "_",
  "/",
  "+",
  "?",
  "&",
  "@",
  "%",
  "a",
  "A",
  "K",
  "I",
  "M",
  "S",
  "x",
  "s",
  "k",
  "0",
  "12",
  "345678",
  "abcdefghij",
  "ABCDEFGH",
  "eyJ",
  "SG.",
  "AKIA",
  "sk-",
  "xoxb",
  "xapp-",
  "pypi-",
  "glpat-",
  "GOCSPX-",
  "token",
  "Token",
  "pass",
  "word",
  "secret",
  "key",
  "api-key",
  "AccessKeyId",
  "SessionToken",
  "bearer",
  "Authorization",
  "h",
  "ht",
  "htt",
  "http",
  "https://",
  "://",
  "é",
  "\u0131",
  "\u212a",
  "\ud83d",
  "\ude00",
  "😀",
];

const textArb = fc
  .array(fc.constantFrom(...ATOMS), { minLength: 1, maxLength: 14 })
  .map((parts) => parts.join(""));
const caseArb = textArb.chain((text) =>
  fc.tuple(fc.constant(text), fc.integer({ min: 0, max: text.length }), fc.boolean()),
);
const NO_HOSTS: ReadonlySet<string> = new Set();

/** Long runs of every token shape, and the labels and separators that make a rule read past a run. */
const LONG_RUN_ATOMS = [
  "AKIAIOSFODNN7EXAMPLE",
  "IOSFODNN7EXAMPLE",
  "ghp_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
  "sk_live_a1B2c3D4e5F6g7H8i9J0",
  "npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6",
  "SG.a1B2c3D4e5F6g7H8i9.J0k1L2m3N4o5P6q7R8",
  "MTIzNDU2Nzg5MDEyMzQ1Njc4.GaBcDe.a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5",
  "AIzaSyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
  "doo_v1_0123456789abcdef0123456789abcdef01234567",
  "9xT2vQ8mZ4LpR7wK3nB6yH1cF5dJ0sA2gE8uV4iO",
  Buffer.from("key AKIAIOSFODNN7EXAMPLE and more text here").toString("base64"),
  "sha512-",
  "0f8fad5b-d9cb-469f-a165-70867728950e",
  "3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39",
  "src/messaging/security/redaction/quiet.ts",
  "aws_access_key_id",
  "aws_secret_access_key",
  "AccessKeyId",
  "123456789",
  "==",
  "=",
  ".",
  "-",
  "_",
  "/",
  "+",
  "*",
  "~",
  "x",
];
const clusterTextArb = fc
  .array(fc.constantFrom(...ATOMS, ...LONG_RUN_ATOMS), { minLength: 1, maxLength: 12 })
  .map((parts) => parts.join(""));

describe("quiet-text fast paths", () => {
  it("credential fast path answers exactly what the planner plans", () => {
    fc.assert(
      fc.property(caseArb, ([text, start, eof]) => {
        const quiet = quietCredentialCut(text, start, eof);
        const full = planCredentialsFull(text, start, eof);
        if (quiet >= 0) {
          expect(full.spans).toEqual([]);
          expect(full.warnings).toEqual([]);
          expect(quiet).toBe(full.cut);
        }
        expect(planCredentials(text, start, eof)).toEqual(full);
      }),
      { numRuns: 8000 },
    );
  });

  it("exfiltration fast path answers exactly what the planner plans", () => {
    fc.assert(
      fc.property(caseArb, ([text, start, eof]) => {
        const quiet = quietExfiltrationCut(text, start, eof);
        const full = planExfiltrationFull(text, start, eof, NO_HOSTS);
        if (quiet >= 0) {
          expect(full.spans).toEqual([]);
          expect(full.warnings).toEqual([]);
          expect(quiet).toBe(full.cut);
        }
        expect(planExfiltrationWith(text, start, eof, NO_HOSTS)).toEqual(full);
      }),
      { numRuns: 4000 },
    );
  });

  it("a URL payload's credential check answers exactly what the full check answers", () => {
    // Payloads as exfilUrlWarning builds them (host, port, path and query), and every atom mix above.
    const payloadArb = fc.oneof(
      clusterTextArb,
      fc
        .tuple(
          fc.constantFrom("ci.example.com", "x.io", "127.0.0.1", "[::1]"),
          fc.constantFrom("", ":8080"),
          fc.array(fc.constantFrom(...ATOMS, ...LONG_RUN_ATOMS, "/", "?", "&", "=", "%2F", "+"), {
            maxLength: 10,
          }),
        )
        .map(([host, port, path]) => `${host}${port}/${path.join("")}`),
    );
    fc.assert(
      fc.property(payloadArb, (payload) => {
        expect(containsFixedCredential(payload)).toBe(containsFixedCredentialFull(payload));
      }),
      { numRuns: 8000 },
    );
    // Both answers occur, so the property compares something.
    expect(containsFixedCredential("x.io/AKIAIOSFODNN7EXAMPLE")).toBe(true);
    expect(containsFixedCredential("ci.example.com/runs/1234")).toBe(false);
  });

  it("takes the fast path for ordinary prose, and not for key names or token shapes", () => {
    for (const prose of [
      "the ",
      "**bold** ",
      "a lazy dog.\n",
      "`code` ",
      "well-known ls -la ",
      "Note: it works. ",
    ]) {
      expect(quietCredentialCut(prose, 0, false)).toBe(prose.length);
      expect(quietExfiltrationCut(prose, 0, false)).toBe(prose.length);
    }
    // The trailing word may still grow into something: held from its start.
    expect(quietCredentialCut("the quick", 0, false)).toBe(4);
    expect(quietExfiltrationCut("see ht", 0, false)).toBe(4);
    for (const loud of [
      "password = ",
      "Bearer ",
      "AKIAIOSFODNN7EXAMPLE",
      "eyJhIjoxfQ.a.b",
      "sk-abc",
      "12345678:",
    ])
      expect(quietCredentialCut(loud, 0, false)).toBe(-1);
    for (const loud of ["https://x", "[a](b"]) expect(quietExfiltrationCut(loud, 0, false)).toBe(-1);
  });

  it("regression (fast-check seed 1764711039): a `secret_key:` value is redacted by the batch path as by the stream", () => {
    // The batch path skipped the key/value rule when a hand-kept pre-check missed `secret_key`;
    // a stream cannot skip it, so the two disagreed (and the batch path leaked the value).
    const text = "secret_key://thethe the";
    const r = new StreamRedactor();
    let out = "";
    for (const ch of text) out += r.push(ch);
    out += r.flush();
    expect(redactAll(text)).toBe("secret_key:[REDACTED: credential] the");
    expect(out).toBe(redactAll(text));
  });

  it("planning only the loud clusters gives exactly the full plan's spans", () => {
    fc.assert(
      fc.property(clusterTextArb, (text) => {
        expect(credentialSpans(text)).toEqual(planCredentialsFull(text, 0, true).spans);
      }),
      { numRuns: 8000 },
    );
  });

  it("plans a long run's cluster alone, and the whole text when a label may read past it", () => {
    expect(loudClusters("commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39 fixed it")).toEqual([
      { start: 7, end: 47 },
    ]);
    expect(loudClusters("the quick brown fox")).toEqual([]);
    expect(loudClusters("aws_access_key_id = AKIAIOSFODNN7EXAMPLE")).toBeNull();
    expect(loudClusters("password = hunter2hunter2hunter2")).toBeNull();
  });

  it("redactAll and the stream agree on quiet and loud text alike", () => {
    fc.assert(
      fc.property(
        textArb,
        fc.array(fc.integer({ min: 1, max: 6 }), { minLength: 1, maxLength: 8 }),
        (text, sizes) => {
          const r = new StreamRedactor();
          let out = "";
          for (let i = 0, k = 0; i < text.length; k++) {
            const size = sizes[k % sizes.length] as number;
            out += r.push(text.slice(i, i + size));
            i += size;
          }
          expect(out + r.flush()).toBe(redactAll(text));
        },
      ),
      { numRuns: 1500 },
    );
  });
});
