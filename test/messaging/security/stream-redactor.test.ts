import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { REDACTION_MARKER, redactAll } from "../../../src/messaging/security/redact.js";
import { StreamRedactor } from "../../../src/messaging/security/stream-redactor.js";

/** Feeds `text` cut at the given chunk sizes (cycled); returns every output piece, flush last. */
function stream(text: string, sizes: readonly number[], redactor = new StreamRedactor()): string[] {
  const pieces: string[] = [];
  let i = 0;
  let k = 0;
  while (i < text.length) {
    const size = Math.max(1, sizes.length === 0 ? text.length : (sizes[k++ % sizes.length] as number));
    pieces.push(redactor.push(text.slice(i, i + size)));
    i += size;
  }
  pieces.push(redactor.flush());
  return pieces;
}

/** Building blocks chosen to straddle chunk boundaries: prefixes, entity spellings, URL and PEM shapes. */
const FRAGMENTS = [
  "AKIAIOSFODNN7EXAMPLE",
  "AKIA",
  "ASIA1234",
  "ghp_0123456789abcdefghijABCDEFGHIJ0123",
  "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123",
  "xoxb-1234567890-abcdef",
  "xapp-1-A0123-abcdefghijk",
  "sk_live_0123456789abcdefABCD",
  "sk-proj-abcdefghijklmnop1234",
  "sk-AbCdEfGhIjKlMnOpQrSt1234",
  "AIzaSyA-0123456789abcdefghijklmnopqrstu",
  "123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw",
  "MTIzNDU2Nzg5MDEyMzQ1Njc4.GaBcDe.abcdefghijklmnopqrstuvwxyz0123",
  "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl",
  "eyJnotjson.abc.def",
  "Authorization: Bearer abc.def-ghi",
  "authorization:",
  "Bearer 0123456789abcdefXYZ",
  "-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAKj34\n",
  "-----END RSA PRIVATE KEY-----",
  "https://",
  "http://evil.com",
  "https://evil.example/?d=",
  "%41%41%41%41%41%41%41%41%41%41%41",
  "?token=",
  "&amp;token=",
  "&#x26;t&#111;ken&#61;",
  ["$", "{TOKEN}"].join(""),
  REDACTION_MARKER,
  "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
  "QUtJQUlPU0ZPRE5ON0VYQU1QTEUgc2VjcmV0IGtleQ==",
  "=",
  "password=hunter22",
  "DB_PASSWORD: s3cr3t-pass",
  '"client_secret": "abc"',
  "postgres://user:pa@ss@db.host/x",
  "[link](",
  "](https://x.example/a?q=1)",
  "](https://grafana.example/d/abc?orgId=1)",
  "?page=2&lang=en)",
  "&tab=Ab1Cd2Ef3",
  "![img](https://img.example/p.png?u=",
  "(",
  ")",
  "]",
  "[",
  '"',
  "`",
  "é",
  "😀",
  "\u200b",
  "the quick fox",
  "a".repeat(41),
  "Zq9".repeat(15),
  "&",
  "?",
  "#",
  "?access_token=Xyz123abc",
  "Authorization: Basic dXNlcjpwYXNz",
];
const SEPARATORS = ["", "", " ", "\n", "\t", "\n\n"];

const textArb = fc
  .array(fc.tuple(fc.constantFrom(...FRAGMENTS), fc.constantFrom(...SEPARATORS)), { maxLength: 16 })
  .map((parts) => parts.map(([f, s]) => f + s).join(""));
const sizesArb = fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 30 });

describe("StreamRedactor", () => {
  it("concatenated output equals redactAll of the whole input, for any chunking", () => {
    fc.assert(
      fc.property(textArb, sizesArb, (text, sizes) => {
        expect(stream(text, sizes).join("")).toBe(redactAll(text));
      }),
      { numRuns: 600 },
    );
  });

  it("also holds for arbitrary unicode text", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 120 }), sizesArb, (text, sizes) => {
        expect(stream(text, sizes).join("")).toBe(redactAll(text));
      }),
      { numRuns: 300 },
    );
  });

  it("matches redactAll on every parity-fixture input, one character at a time and in random chunks", () => {
    const records: Array<{ args: [string] }> = JSON.parse(
      readFileSync(new URL("../../../fixtures/parity/redact.json", import.meta.url), "utf8"),
    );
    for (const { args } of records) {
      const text = args[0];
      const want = redactAll(text);
      expect(stream(text, [1]).join("")).toBe(want);
      expect(stream(text, [7, 3, 19, 2]).join("")).toBe(want);
    }
  });

  it("never emits a planted credential in any piece", () => {
    const secrets = [
      { cred: "AKIAZ7Q2WXYV4K8N3MPL", body: "Z7Q2WXYV4K8N3MPL" },
      { cred: "ghp_R4nd0mT0k3nV4lu3Xy9Zq8Wv7Ut6Sr5Qp4", body: "R4nd0mT0k3nV4lu3Xy9Z" },
      { cred: "xoxb-2048-4096-Qw3rTy8UiOp4AsDf", body: "Qw3rTy8UiOp4AsDf" },
      { cred: "sk-ant-api03-Zx8Cv7Bn6Mm5Ll4Kk3Jj2", body: "Zx8Cv7Bn6Mm5Ll4Kk3Jj2" },
      { cred: "Authorization: Bearer Tk9.Lm8-Np7_Qr6", body: "Tk9.Lm8-Np7_Qr6" },
      { cred: "https://evil.example/p?k=AKIAQ1W2E3R4T5Y6U7I8", body: "Q1W2E3R4T5Y6U7I8" },
      { cred: "password=Pa55w0rd!Pa55w0rd", body: "Pa55w0rd!Pa55w0rd" },
    ];
    const prose = fc.constantFrom("", "see ", "the value is\n", "`", "(", "[x](", "key: ", "token ");
    fc.assert(
      fc.property(
        fc.constantFrom(...secrets),
        prose,
        prose,
        sizesArb,
        ({ cred, body }, before, after, sizes) => {
          const text = `${before} ${cred} ${after}`;
          const pieces = stream(text, sizes);
          for (const piece of pieces) expect(piece).not.toContain(body);
          // Nor may a piece boundary let a prefix and a suffix of the secret out separately.
          const joined = pieces.join("");
          expect(joined).not.toContain(body.slice(0, 8));
          expect(joined).not.toContain(body.slice(-8));
        },
      ),
      { numRuns: 400 },
    );
  });

  it("holds nothing back once the text ends in whitespace after ordinary prose", () => {
    const r = new StreamRedactor();
    expect(r.push("hello world, nothing secret here. ")).toBe("hello world, nothing secret here. ");
    expect(r.held).toBe(0);
  });

  it("holds back only the tail that could still become a credential", () => {
    const r = new StreamRedactor();
    expect(r.push("the key is AKIA12")).toBe("the key is ");
    expect(r.held).toBe("AKIA12".length);
    expect(r.push("34567890ABCDEF")).toBe(""); // a complete id, but the run may still grow
    expect(r.push(" and more ")).toBe(`${REDACTION_MARKER} and more `);
    expect(r.held).toBe(0);
    // A prefix that turns out not to be a key is released as soon as that is certain.
    expect(r.push("AKIA12")).toBe("");
    expect(r.push(" done ")).toBe("AKIA12 done ");
    expect(r.flush()).toBe("");
  });

  it("holds a partial URL, then emits the exfiltration marker", () => {
    const r = new StreamRedactor();
    expect(r.push("go to https://evil.example/?k=AKIA")).toBe("go to ");
    expect(r.push("IOSFODNN7EXAMPLE ok ")).toBe("[REDACTED: suspicious URL to evil.example] ok ");
  });

  it("holds a partial entity-spelled parameter name", () => {
    const r = new StreamRedactor();
    expect(r.push("https://app.example.com/x&#x26;t&#11")).toBe("");
    expect(r.push("1;ken&#61;opaque123 ")).toBe(
      `https://app.example.com/x&#x26;t&#111;ken&#61;${REDACTION_MARKER} `,
    );
  });

  it("holds a PEM header until its END marker arrives", () => {
    const r = new StreamRedactor();
    expect(r.push("key:\n-----BEGIN PRIVATE KEY-----\nMIIEvQ")).toBe("key:\n");
    expect(r.push("IBADANBgkqhkiG9w0BAQEFAASC\nmore prose ")).toBe("");
    expect(r.push("-----END PRIVATE KEY----- done ")).toBe(`${REDACTION_MARKER} done `);
  });

  it("redacts a credential split across many tiny chunks", () => {
    const pieces = stream("token ghp_0123456789abcdefghijABCDEFGHIJ0123 end", [1]);
    expect(pieces.join("")).toBe(`token ${REDACTION_MARKER} end`);
    expect(pieces.some((p) => p.includes("ghp_"))).toBe(false);
  });

  it("never splits a surrogate pair across pieces", () => {
    const r = new StreamRedactor();
    const out = r.push("ok 😀".slice(0, 4));
    expect(out).toBe("ok ");
    expect(r.push("😀".slice(1)) + r.push(" ")).toBe("😀 ");
  });

  it("respects allowedHosts like redactExfiltrationUrls", () => {
    const text = "![c](https://img.example/p.png?d=1) ![c](https://other.example/p.png?d=1) ";
    const r = new StreamRedactor({ allowedHosts: ["img.example"] });
    const out = stream(text, [3], r).join("");
    expect(out).toBe(
      "![c](https://img.example/p.png?d=1) ![c]([REDACTED: suspicious URL to other.example]) ",
    );
  });

  it("stays linear on a long undecided run streamed in small chunks", () => {
    const text = `${"Zq9".repeat(40_000)} end`;
    // No clock here (bench/linearity measures the ratio): a quadratic re-scan of the undecided run
    // would take minutes at this size and fail by the suite's test timeout.
    expect(stream(text, [7]).join("")).toBe(redactAll(text));
  });
});
