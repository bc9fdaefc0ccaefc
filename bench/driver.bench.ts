/**
 * TurnDriver overhead per event: 100k events through the driver into a renderer that does nothing,
 * so the number is the driver's own cost (framing, redaction, ladder bookkeeping, dispatch). Then the
 * same events into the kit's LiveRenderer on a surface whose platform calls cost nothing: the live
 * state machine's own cost per event (splitting, the status line, throttled frames, seals).
 */
import { realClock } from "../src/messaging/base/clock.js";
import { silentLogger } from "../src/messaging/base/logger.js";
import { DEFAULT_CAPABILITIES } from "../src/messaging/channel/capabilities.js";
import { LiveRenderer } from "../src/messaging/channel/live-renderer.js";
import type { LiveSurface } from "../src/messaging/channel/live-surface.js";
import { MemoryAuditSink } from "../src/messaging/security/audit.js";
import { TurnDriver } from "../src/messaging/turn/driver.js";
import type { ProviderEvent } from "../src/messaging/turn/provider-events.js";
import type { Renderer } from "../src/messaging/turn/renderer.js";
import { SilentRenderer } from "../src/messaging/turn/renderer.js";

/** A surface whose every platform call is free: what is left is the kit's own work. */
function freeSurface(): LiveSurface<string> {
  let next = 0;
  return {
    capabilities: DEFAULT_CAPABILITIES,
    sourceCap: 4000,
    commands: { new: "/new", stop: "/stop" },
    plain: (text) => text,
    quiet: (text) => `_${text}_`,
    promptHead: (title) => title,
    promptBody: (head, hint) => `${head}\n${hint}`,
    decided: (head, outcome) => `${head}\n${outcome}`,
    fit: (source) => (source ? [source] : []),
    join: (body, footer) => (body && footer ? `${body}\n\n${footer}` : body || footer),
    fits: (body) => body.length <= 4096,
    post: async () => String(next++),
    edit: async () => {},
    refused: () => false,
    options: (choices) => choices.join("|"),
    approval: () => ({ widgets: undefined, shown: [] }),
    noWidgets: "",
  };
}

function makeEvents(n: number): ProviderEvent[] {
  const words = [
    "the ",
    "quick ",
    "brown ",
    "fox ",
    "jumps ",
    "over ",
    "`code` ",
    "a lazy dog.\n",
    "**bold** ",
  ];
  const out: ProviderEvent[] = [];
  for (let i = 0; i < n - 1; i++) {
    if (i % 500 === 499)
      out.push({ type: "tool_call", toolCallId: `t${i}`, title: "Read file", kind: "read" });
    else if (i % 97 === 0) out.push({ type: "thinking", text: "considering the options " });
    else out.push({ type: "text", text: words[i % words.length] as string });
  }
  out.push({ type: "complete", stopReason: "end_turn" });
  return out;
}

async function runOnce(events: ProviderEvent[], renderer: () => Renderer): Promise<number> {
  const provider = {
    async *prompt() {
      yield* events;
    },
    answerPermission() {},
  };
  const driver = new TurnDriver({
    provider,
    renderer: renderer(),
    audit: new MemoryAuditSink(),
    sessionKey: "bench",
  });
  const t0 = performance.now();
  await driver.run("go");
  return performance.now() - t0;
}

async function medianOf(events: ProviderEvent[], renderer: () => Renderer): Promise<number> {
  await runOnce(events, renderer); // warm-up
  const samples: number[] = [];
  for (let i = 0; i < 5; i++) samples.push(await runOnce(events, renderer));
  samples.sort((a, b) => a - b);
  return samples[2] as number;
}

export default async function bench() {
  const n = 100_000;
  const events = makeEvents(n);
  const median = await medianOf(events, () => new SilentRenderer());
  const live = await medianOf(
    events,
    () =>
      new LiveRenderer({
        surface: freeSurface(),
        channel: "bench",
        timers: realClock,
        now: () => Date.now(),
        logger: silentLogger,
        throttleMs: 1000,
      }),
  );
  return {
    events: n,
    medianMs: Number(median.toFixed(1)),
    usPerEvent: Number(((median * 1000) / n).toFixed(3)),
    targetUsPerEvent: 2,
    liveMedianMs: Number(live.toFixed(1)),
    liveUsPerEvent: Number(((live * 1000) / n).toFixed(3)),
  };
}
