/**
 * The agent's lifecycle as every channel shows it (issue 15), the whole channel against its fake
 * with a scripted agent: a failure's reason, an agent that cannot start, a silent agent, a wait for
 * a free agent, a fresh session, a retitled tool, text around a tool call, the continuation after
 * an approval, and the typed-reply hint beside the buttons. What is said comes from the render kit;
 * these checks hold each channel to showing it, in the right place.
 */
import { expect, it, vi } from "vitest";
import type { ScriptStep } from "../../src/providers/scripted.js";
import { permissionRequest } from "../helpers/events.js";
import { ManualClock } from "../helpers/manual-clock.js";
import type { CheckResult } from "./contract.js";
import type { DispatcherHarness, Rig } from "./dispatcher-contract.js";
import { close, rig, seen } from "./dispatcher-contract.js";

export const LIFECYCLE_CHECKS = [
  "a failed turn shows the agent's reason",
  "an agent that cannot start says why",
  "a silent agent's status says how long and names the stop command",
  "a conversation waiting for a free agent is told its place",
  "a fresh agent session says the context is gone, above the answer",
  "a retitled tool shows its new title",
  "text around a tool call stays separate",
  "the continuation after an approval lands below the prompt",
  "the typed-reply hint names the buttons shown",
  "context: told once past the soft threshold, compacted past the hard one",
] as const;

const text = (t: string): ScriptStep => ({ type: "text", text: t });
const done: ScriptStep = { type: "complete", stopReason: "end_turn" };
const REASON = "agent failed the turn: API Error: Unable to connect to API (ECONNREFUSED)";

/** Index of the first visible entry matching, -1 when none does. */
function at(r: Rig, pattern: RegExp | string): number {
  return r.lab
    .visible()
    .findIndex((v) => (typeof pattern === "string" ? v.includes(pattern) : pattern.test(v)));
}

export function lifecycleContract(h: DispatcherHarness, results: Map<string, CheckResult>): void {
  /** `applies` false: the check asserts what the channel does instead, and the table says n/a. */
  const check = (name: (typeof LIFECYCLE_CHECKS)[number], fn: () => Promise<void>, applies = true) =>
    it(name, async () => {
      results.set(name, false);
      await fn();
      results.set(name, applies ? true : "n/a");
    });

  check("a failed turn shows the agent's reason", async () => {
    // A failed turn replaces the agent (a fresh script), so each case gets its own channel.
    const silent = await rig(h, { turns: [[{ throws: REASON }]] });
    try {
      // Nothing answered: the notice itself carries the reason.
      await silent.live.say(silent.lab.owner, "anyone there?");
      await seen(silent, "Agent failed the turn: API Error: Unable to connect to API (ECONNREFUSED)");
      await seen(silent, /Try again, or `?[/!]new`? to start fresh/);
      expect(silent.lab.visible().every((v) => v.trim() !== "")).toBe(true);
    } finally {
      await close(silent);
    }
    const partial = await rig(h, { turns: [[text("Half an answer."), { throws: REASON }]] });
    try {
      // Part of an answer: it stays, and the turn's status line says why it ended.
      await partial.live.say(partial.lab.owner, "again");
      await seen(partial, /Half an answer\.[\s\S]*⚠️ Failed after \d+s: agent failed the turn: API Error/);
    } finally {
      await close(partial);
    }
  });

  check("an agent that cannot start says why", async () => {
    const r = await rig(h, {
      provider: {
        startError: "agent rejected session/new: Authentication required; agent stderr: please log in first",
      },
    });
    try {
      await r.live.say(r.lab.owner, "hello");
      await seen(
        r,
        "The agent could not be started: agent rejected session/new: Authentication required; agent stderr: please log in first",
      );
    } finally {
      await close(r);
    }
  });

  check("a silent agent's status says how long and names the stop command", async () => {
    // The turn then waits on a clock that never moves: the status is what the user reads.
    const r = await rig(h, {
      turns: [[{ type: "silence", seconds: 90 }, { delayMs: 60_000 }]],
      provider: { timers: new ManualClock() },
    });
    try {
      await r.live.say(r.lab.owner, "run the long job");
      await seen(r, /No output from the agent for 1m 30s · `?[/!]stop`? ends the turn/);
    } finally {
      await close(r);
    }
  });

  check("a conversation waiting for a free agent is told its place", async () => {
    const r = await rig(h, {
      turns: [[{ type: "agent_wait", position: 3 }, { delayMs: 60_000 }]],
      provider: { timers: new ManualClock() },
    });
    try {
      await r.live.say(r.lab.owner, "hello");
      await seen(r, "Waiting for a free agent… (2 ahead)");
    } finally {
      await close(r);
    }
  });

  check("a fresh agent session says the context is gone, above the answer", async () => {
    const r = await rig(h, {
      turns: [
        [
          {
            type: "session_resume",
            outcome: "fresh",
            cause: "agent_exited",
            reason: "this agent cannot restore an earlier session",
          },
          text("Hello again."),
          done,
        ],
      ],
    });
    try {
      await r.live.say(r.lab.owner, "do you remember me?");
      await seen(r, "Hello again.");
      const notice = at(r, "earlier context of this conversation is gone");
      expect(notice).toBeGreaterThanOrEqual(0);
      expect(r.lab.visible()[notice]).toContain("this agent cannot restore an earlier session");
      expect(notice).toBeLessThan(at(r, "Hello again."));
    } finally {
      await close(r);
    }
  });

  check(
    "a retitled tool shows its new title",
    async () => {
      if (h.buffered) return bufferedToolsStayOffScreen(h);
      const r = await rig(h, {
        turns: [
          [
            { type: "tool_call", toolCallId: "t1", title: "Terminal", kind: "execute" },
            { type: "tool_call_update", toolCallId: "t1", title: "ls -la", status: "in_progress" },
            { delayMs: 60_000 },
          ],
        ],
        provider: { timers: new ManualClock() },
      });
      try {
        await r.live.say(r.lab.owner, "list the files");
        await seen(r, "🔧 ls -la…");
        expect(at(r, "Terminal")).toBe(-1);
      } finally {
        await close(r);
      }
    },
    !h.buffered,
  );

  check("text around a tool call stays separate", async () => {
    const r = await rig(h, {
      turns: [
        [
          text("I'll list the files."),
          { type: "tool_call", toolCallId: "t1", title: "ls", kind: "execute" },
          text("LISTED: a, b."),
          done,
        ],
      ],
    });
    try {
      await r.live.say(r.lab.owner, "list the files");
      await seen(r, "LISTED: a, b.");
      await seen(r, /I'll list the files\.\s*\n\s*\n?\s*LISTED: a, b\./);
      expect(at(r, "files.LISTED")).toBe(-1);
    } finally {
      await close(r);
    }
  });

  check("the continuation after an approval lands below the prompt", async () => {
    const r = await rig(h, {
      turns: [
        {
          steps: [text("Let me check."), permissionRequest({ requestId: "r1", title: "cat build.log" })],
          onPermission: { approve: [text("The log is clean."), done] },
        },
        {
          // A tool's live status line was on screen when the prompt came: no stale line stays above it.
          steps: [
            { type: "tool_call", toolCallId: "t2", title: "rm -rf dist", kind: "delete" },
            { delayMs: 300 },
            permissionRequest({ requestId: "r2", title: "rm -rf dist" }),
          ],
          onPermission: { approve: [text("Removed dist."), done] },
        },
      ],
    });
    try {
      const { owner } = r.lab;
      await r.live.say(owner, "check the build");
      await seen(r, "cat build.log");
      await r.live.say(owner, "1");
      await seen(r, "The log is clean.");
      const prompt = at(r, "cat build.log");
      expect(at(r, "Let me check.")).toBeLessThan(prompt);
      expect(at(r, "The log is clean.")).toBeGreaterThan(prompt);
      await r.live.say(owner, "clean up");
      await seen(r, /Permission needed:?\**:? rm -rf dist/);
      await r.live.say(owner, "1");
      await seen(r, "Removed dist.");
      expect(at(r, "Removed dist.")).toBeGreaterThan(at(r, /Permission needed:?\**:? rm -rf dist/));
      expect(at(r, "🔧 rm -rf dist…")).toBe(-1);
    } finally {
      await close(r);
    }
  });

  check("the typed-reply hint names the buttons shown", async () => {
    const r = await rig(h, {
      turns: [
        {
          steps: [permissionRequest({ requestId: "r1", title: "deploy", always: true })],
          onPermission: { deny: [text("Not deployed."), done] },
        },
      ],
    });
    try {
      const { owner } = r.lab;
      await r.live.say(owner, "deploy it");
      await seen(r, /[Rr]eply 1 to approve/);
      const prompt = r.lab.visible()[at(r, /[Rr]eply 1 to approve/)] ?? "";
      const alwaysButton = r.lab.visible().some((v) => v !== prompt && /always/i.test(v) && v.length < 40);
      // The hint offers "3" exactly when an "always" button is on screen beside it.
      expect(prompt.includes("3 to always allow")).toBe(alwaysButton);
      expect(prompt).toContain("2 to deny");
      await r.live.say(owner, "2");
      await seen(r, "Not deployed.");
    } finally {
      await close(r);
    }
  });

  check("context: told once past the soft threshold, compacted past the hard one", async () => {
    const usage = (pct: number): ScriptStep => ({ type: "usage", used: pct * 2_000, size: 200_000 });
    const r = await rig(h, {
      turns: [
        [usage(82), text("one"), done],
        [usage(85), text("two"), done],
        [usage(93), text("three"), done],
      ],
      provider: { compaction: { outcome: { ok: true, contextUsagePct: 9 } } },
    });
    const idle = () =>
      vi.waitFor(() => expect(r.shared.sessions.isBusy(r.live.keyOf(r.lab.owner))).toBe(false));
    try {
      const { owner } = r.lab;
      await r.live.say(owner, "first");
      await seen(r, /used 82% of the agent's context\. `?[/!]compact`? summarizes it/);
      // The turn-status line shows the usage the agent reported.
      await seen(r, /one[\s\S]*Finished in \d+s · 🔴 ctx 82%/);
      await idle();
      await r.live.say(owner, "second");
      await seen(r, "two");
      await idle();
      expect(r.lab.visible().filter((v) => v.includes("of the agent's context"))).toHaveLength(1);
      await r.live.say(owner, "third");
      await seen(r, "Context reached 93%: ✅ Context compacted. Context usage is now 9%.");
      expect(r.providers[0]?.compactions).toBe(1);
    } finally {
      await close(r);
    }
  });
}

/**
 * A buffered channel shows no live status at all: a tool's titles (first or retitled) never reach
 * the chat, only the answer does, once the turn ends.
 */
async function bufferedToolsStayOffScreen(h: DispatcherHarness): Promise<void> {
  const r = await rig(h, {
    turns: [
      [
        { type: "tool_call", toolCallId: "t1", title: "Terminal", kind: "execute" },
        { type: "tool_call_update", toolCallId: "t1", title: "ls -la", status: "completed" },
        text("Listed: a, b."),
        done,
      ],
    ],
  });
  try {
    await r.live.say(r.lab.owner, "list the files");
    await seen(r, "Listed: a, b.");
    expect(at(r, "Terminal")).toBe(-1);
    expect(at(r, "ls -la")).toBe(-1);
  } finally {
    await close(r);
  }
}
