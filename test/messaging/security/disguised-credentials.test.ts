import { readFileSync } from "node:fs";
import fc from "fast-check";
import MarkdownIt from "markdown-it";
import { describe, expect, it } from "vitest";
import { redactForDisplay } from "../../../src/messaging/security/display-safety.js";
import { redactAll } from "../../../src/messaging/security/redact.js";
import { StreamRedactor } from "../../../src/messaging/security/stream-redactor.js";
import {
  APPLICABLE_PAIRS,
  CREDENTIAL_KINDS,
  credentialDisguiseArbitrary,
  credentialDisguiseList,
  DISGUISES,
  type DisguisedCredential,
  disguisedCredential,
  survivesIn,
} from "../../helpers/credential-disguises.js";

/**
 * Issue 14: no credential of any kind, in any disguise a display undoes, survives in the text a
 * reader sees. "Sees" is judged without the redactor's own readings: the output as sent, and its
 * text as markdown-it (the web chat's renderer) shows it.
 */
const md = new MarkdownIt({ html: false, linkify: true, breaks: true });

function visibleForms(text: string): string[] {
  return [text, md.utils.unescapeAll(md.render(text).replace(/<[^>]*>/g, ""))];
}

function leaks(sample: Pick<DisguisedCredential, "needle">, shown: string): boolean {
  return visibleForms(shown).some((v) => survivesIn(v, sample));
}

describe("the credential-disguises generator", () => {
  it("covers 30+ kinds and every disguise the issue lists", () => {
    expect(CREDENTIAL_KINDS.length).toBeGreaterThanOrEqual(30);
    const names = DISGUISES.map((d) => d.name);
    for (const required of [
      "backslash-escapes",
      "entity-decimal",
      "entity-hex",
      "entity-named",
      "zero-width",
      "ansi",
      "stream-split",
      "link-split",
      "bold-halves",
      "strike-halves",
    ])
      expect(names).toContain(required);
  });

  it("is deterministic and every sample holds its bare secret", () => {
    const [kind, disguise] = APPLICABLE_PAIRS[0]!;
    expect(disguisedCredential(kind, disguise, 7)).toEqual(disguisedCredential(kind, disguise, 7));
    for (const s of credentialDisguiseList(3)) {
      expect(s.secret).toContain(s.needle);
      expect(s.text).toBe(s.chunks.join(""));
      // Undisguised, the needle is readable: the plain and stream forms carry the secret verbatim.
      if (s.disguise === "plain" || s.disguise === "stream-split") expect(s.text).toContain(s.secret);
    }
  });

  it("makes a disguise the literal scan alone does not see through", () => {
    const sample = disguisedCredential(
      CREDENTIAL_KINDS.find((k) => k.name === "aws-access-key-id")!,
      DISGUISES.find((d) => d.name === "entity-decimal")!,
      1,
    );
    expect(sample.text).not.toContain(sample.secret);
    expect(md.utils.unescapeAll(sample.text)).toContain(sample.secret);
  });
});

describe("redactForDisplay against every disguise", () => {
  it("leaves no needle visible on the whole deterministic list", () => {
    const leaked = credentialDisguiseList(14, 2).filter((s) => leaks(s, redactForDisplay(s.text).text));
    expect(leaked.map((s) => `${s.kind}/${s.disguise}: ${s.text}`)).toEqual([]);
  });

  it("leaves no needle visible for any kind, disguise and seed", () => {
    fc.assert(
      fc.property(credentialDisguiseArbitrary(), (s) => {
        expect(leaks(s, redactForDisplay(s.text).text)).toBe(false);
      }),
      { numRuns: 600 },
    );
  });

  it("leaves no needle visible when the pieces arrive as a stream", () => {
    fc.assert(
      fc.property(credentialDisguiseArbitrary(), (s) => {
        const stream = new StreamRedactor();
        let out = "";
        for (const chunk of s.chunks) out += stream.push(chunk);
        out += stream.flush();
        expect(leaks(s, redactForDisplay(out).text)).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it("leaves no needle visible anywhere in the committed corpus", () => {
    const corpus = JSON.parse(
      readFileSync(new URL("../../../fixtures/redaction/corpus.json", import.meta.url), "utf8"),
    ) as { planted: Array<{ kind: string; disguise: string; chunks: string[]; needle: string }> };
    expect(corpus.planted.length).toBeGreaterThanOrEqual(1000);
    expect(new Set(corpus.planted.map((p) => p.kind)).size).toBeGreaterThanOrEqual(30);
    const leaked = corpus.planted.filter((p) => leaks(p, redactForDisplay(p.chunks.join("")).text));
    expect(leaked.map((p) => `${p.kind}/${p.disguise}`)).toEqual([]);
  });
});

describe("a key in one paragraph is not unmade by a reading that finds a key in another", () => {
  // A reading that deletes `_` (every delimiter, one rendering pass) also turns `ghs_…` into `ghs…`.
  // Adopted for a key only it could see while another key hid in a `_`-keeping reading, it showed the
  // other key's body with no prefix left to match (found by batching the corpus: each was safe alone).
  const entityPat =
    "Found github_pat_X5&#84;SBoEINS6G5VM34D4Qov4e9Mq3iz_5qlT6&#122;syWLPRitob667nF3GvNCt1rRq7zQN9YUiJE_V7AhXz9ea";
  const cases: Array<[string, string, string]> = [
    ["ghs_c3fbsi0Pcr9VxPe||7tzHymI||3zNWRqsVAa7tEK", "c3fbsi0Pcr9VxPe7tzHymI3zNWRqsVAa7tEK", entityPat],
    [
      "Use ghs_iwBIGSxeOK2MpAMtj41Dt3Em5H*SGS*Yx2h7Mn (rotate it).",
      "iwBIGSxeOK2MpAMtj41Dt3Em5HSGSYx2h7Mn",
      entityPat,
    ],
    [
      'Found \\"api\\_key\\"\\: \\"w4A6Q1PioEW1q6WbCn95YOwWWFnAy0kw\\" in the env file.',
      "w4A6Q1PioEW1q6WbCn95YOwWWFnAy0kw",
      'The config has [client_secret: k8UI](https://en.example.org/wiki/Key_(crypto) "a title")e1JAOA1-eTnWGZRHmeBo50WqHHlq',
    ],
  ];
  it.each(cases)("%s beside another key", (text, needle, other) => {
    for (const joined of [`${text}\n\n${other}`, `${other}\n\n${text}`]) {
      expect(leaks({ needle }, redactForDisplay(joined).text)).toBe(false);
    }
  });

  it("holds for the whole corpus in batches of 40", () => {
    const all = APPLICABLE_PAIRS.map(([kind, disguise], i) => disguisedCredential(kind, disguise, 1000 + i));
    const leaked: string[] = [];
    for (let at = 0; at < all.length; at += 40) {
      const batch = all.slice(at, at + 40);
      // The real path: the driver's stream redaction, then the sink's display redaction.
      const shown = redactForDisplay(redactAll(batch.map((s) => s.text).join("\n\n"))).text;
      for (const s of batch) if (survivesIn(shown, s)) leaked.push(`${s.kind}/${s.disguise}`);
    }
    expect(leaked).toEqual([]);
  }, 60_000);
});
