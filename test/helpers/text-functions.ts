/**
 * Every function agent text passes through on its way to a chat (redaction, display safety,
 * splitting, tables, markup and options parsing, and each channel's markup conversion), each as a
 * `(text) => unknown` taking the whole text. Shared by bench/linearity.bench.ts (time ratios) and
 * test/messaging/text/linear-time.test.ts (a wall-clock guard), so both cover the same list.
 */
import { splitForDelivery } from "../../src/discord/format.js";
import { redactForDisplay } from "../../src/messaging/security/display-safety.js";
import { redactAll } from "../../src/messaging/security/redact.js";
import { StreamRedactor } from "../../src/messaging/security/stream-redactor.js";
import { flattenMermaidBody, flattenPipeTables, stripThinkingTags } from "../../src/messaging/text/markup.js";
import {
  applyOptionsCap,
  renderOptionsAsText,
  splitOptionsTrailer,
} from "../../src/messaging/text/options.js";
import { splitMarkdownBytes, splitMarkdownSafe } from "../../src/messaging/text/split.js";
import { StreamingSplitter } from "../../src/messaging/text/streaming-splitter.js";
import { renderTables } from "../../src/messaging/text/tables/index.js";
import { fitTelegramHtml, markdownToTelegramHtml } from "../../src/telegram/html.js";

const CAPS = { maxButtons: 3, mentionGrammars: true };

/** Every function agent text passes through, each taking the whole text. */
export const TEXT_FUNCTIONS: ReadonlyArray<readonly [string, (text: string) => unknown]> = [
  ["redactAll", redactAll],
  [
    "StreamRedactor16",
    (t) => {
      const r = new StreamRedactor();
      for (let i = 0; i < t.length; i += 16) r.push(t.slice(i, i + 16));
      return r.flush();
    },
  ],
  ["redactForDisplay", (t) => redactForDisplay(t)],
  ["splitMarkdownSafe", (t) => splitMarkdownSafe(t, 1900)],
  [
    "StreamingSplitter16",
    (t) => {
      const s = new StreamingSplitter(1900);
      for (let i = 0; i < t.length; i += 16) s.append(t.slice(i, i + 16));
      return s.finish();
    },
  ],
  ["splitMarkdownBytes", (t) => splitMarkdownBytes(t, 4096)],
  ["renderTables(auto)", (t) => renderTables(t, { policy: "auto" })],
  ["renderTables(grid)", (t) => renderTables(t, { policy: "grid" })],
  ["stripThinkingTags", (t) => stripThinkingTags(t, { hidePartial: true })],
  ["flattenPipeTables", flattenPipeTables],
  ["flattenMermaidBody", flattenMermaidBody],
  ["splitOptionsTrailer", (t) => splitOptionsTrailer(t, { hidePartial: true })],
  ["applyOptionsCap", (t) => applyOptionsCap(t, ["a", "b", "c", "d", t.slice(0, 200)], CAPS)],
  ["renderOptionsAsText", (t) => renderOptionsAsText(t, CAPS)],
  ["telegram:markdownToHtml", markdownToTelegramHtml],
  ["telegram:fitHtml", (t) => fitTelegramHtml(t)],
  ["discord:splitForDelivery", (t) => splitForDelivery(t)],
];
