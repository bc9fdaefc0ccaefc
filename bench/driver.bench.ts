/**
 * TurnDriver overhead per event: 100k events through the driver into a renderer that does nothing,
 * so the number is the driver's own cost (framing, redaction, ladder bookkeeping, dispatch).
 */
import { MemoryAuditSink } from "../src/messaging/security/audit.js";
import { TurnDriver } from "../src/messaging/turn/driver.js";
import type { ProviderEvent } from "../src/messaging/turn/provider-events.js";
import { SilentRenderer } from "../src/messaging/turn/renderer.js";

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

async function runOnce(events: ProviderEvent[]): Promise<number> {
  const provider = {
    async *prompt() {
      yield* events;
    },
    answerPermission() {},
  };
  const driver = new TurnDriver({
    provider,
    renderer: new SilentRenderer(),
    audit: new MemoryAuditSink(),
    sessionKey: "bench",
  });
  const t0 = performance.now();
  await driver.run("go");
  return performance.now() - t0;
}

export default async function bench() {
  const n = 100_000;
  const events = makeEvents(n);
  await runOnce(events); // warm-up
  const samples: number[] = [];
  for (let i = 0; i < 5; i++) samples.push(await runOnce(events));
  samples.sort((a, b) => a - b);
  const median = samples[2] as number;
  return {
    events: n,
    medianMs: Number(median.toFixed(1)),
    usPerEvent: Number(((median * 1000) / n).toFixed(3)),
    targetUsPerEvent: 2,
  };
}
