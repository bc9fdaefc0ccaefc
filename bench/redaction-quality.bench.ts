/**
 * Redaction quality on the labelled corpus fixtures/redaction/corpus.json (bench/redaction-corpus.ts
 * writes it): planted credentials in display disguises, and benign strings that only look like
 * secrets. Goal (issue 14): leaks <= 0.5%, benign changed <= 2%.
 *
 * - displayLeakRate: planted entries whose secret body a reader can still see after
 *   redactForDisplay (the function channels call on the form they render). "See" is judged
 *   independently of the redactor: the output itself, and its text as markdown-it renders it
 *   (tags stripped, references decoded), invisible characters discounted.
 * - displayPartialLeakRate: the same, counting half of the body visible as a leak.
 * - streamLeakRate: the stream-split entries fed to a StreamRedactor chunk by chunk, then the
 *   display pass over its output (what a streaming renderer does).
 * - redactAllLeakRate: the literal scan alone (no display readings), for comparison.
 * - benignChangedRate: benign entries redactForDisplay changes; benignChangedByCategory says which.
 */
import { readFileSync } from "node:fs";
import MarkdownIt from "markdown-it";
import { redactForDisplay } from "../src/messaging/security/display-safety.js";
import { redactAll } from "../src/messaging/security/redact.js";
import { StreamRedactor } from "../src/messaging/security/stream-redactor.js";
import { longestSurvivingPart, survivesIn } from "../test/helpers/credential-disguises.js";
import { CORPUS_PATH, type Corpus } from "./redaction-corpus.js";

const md = new MarkdownIt({ html: false, linkify: true, breaks: true });

/** What a reader sees of `text`: itself (a plain-text channel) and its rendered markdown's text. */
function visibleForms(text: string): string[] {
  const rendered = md.utils.unescapeAll(md.render(text).replace(/<[^>]*>/g, ""));
  return [text, rendered];
}

function pct(n: number, of: number): number {
  return Number(((100 * n) / Math.max(1, of)).toFixed(2));
}

export default async function bench(): Promise<Record<string, number | string>> {
  const corpus = JSON.parse(readFileSync(CORPUS_PATH, "utf8")) as Corpus;
  const kinds = new Set(corpus.planted.map((p) => p.kind));
  const disguises = new Set(corpus.planted.map((p) => p.disguise));
  let leaks = 0;
  let partial = 0;
  let literalLeaks = 0;
  let streamed = 0;
  let streamLeaks = 0;
  const leakedPairs = new Map<string, number>();
  for (const p of corpus.planted) {
    const text = p.chunks.join("");
    const shown = visibleForms(redactForDisplay(text).text);
    if (shown.some((v) => survivesIn(v, p))) {
      leaks++;
      const key = `${p.kind}/${p.disguise}`;
      leakedPairs.set(key, (leakedPairs.get(key) ?? 0) + 1);
    }
    if (shown.some((v) => 2 * longestSurvivingPart(v, p) >= p.needle.length)) partial++;
    if (visibleForms(redactAll(text)).some((v) => survivesIn(v, p))) literalLeaks++;
    if (p.chunks.length > 1) {
      streamed++;
      const r = new StreamRedactor();
      let out = "";
      for (const chunk of p.chunks) out += r.push(chunk);
      out += r.flush();
      if (visibleForms(redactForDisplay(out).text).some((v) => survivesIn(v, p))) streamLeaks++;
    }
  }
  let changed = 0;
  const byCategory = new Map<string, number>();
  for (const b of corpus.benign) {
    if (redactForDisplay(b.text).text === b.text) continue;
    changed++;
    byCategory.set(b.category, (byCategory.get(b.category) ?? 0) + 1);
  }
  return {
    planted: corpus.planted.length,
    credentialKinds: kinds.size,
    disguises: disguises.size,
    benign: corpus.benign.length,
    displayLeakRate: pct(leaks, corpus.planted.length),
    displayPartialLeakRate: pct(partial, corpus.planted.length),
    streamLeakRate: pct(streamLeaks, streamed),
    redactAllLeakRate: pct(literalLeaks, corpus.planted.length),
    benignChangedRate: pct(changed, corpus.benign.length),
    benignChangedByCategory: [...byCategory].map(([c, n]) => `${c}:${n}`).join(", ") || "none",
    leakedPairs: [...leakedPairs].map(([k, n]) => `${k}:${n}`).join(", ") || "none",
    goalLeakRateMax: 0.5,
    goalBenignChangedMax: 2,
  };
}
