/**
 * The demo agent's scripted answers: which scenario a prompt asks for, and the text it streams.
 * Deterministic and pure so tests can assert on it. Layer: providers (no imports).
 */

export type ScenarioName = "hello" | "table" | "long" | "tool" | "options" | "slow" | "secret" | "model";

export const SCENARIO_WORDS: readonly Exclude<ScenarioName, "hello">[] = [
  "table",
  "long",
  "tool",
  "options",
  "slow",
  "secret",
  "model",
];

/**
 * parley's naming turn (auto-title) asks for a title and quotes the exchange after "User:". The
 * demo names it from the user's first words, as a model would in spirit; null for any other prompt.
 */
export function demoTitle(prompt: string): string | null {
  if (!prompt.startsWith("Name this conversation")) return null;
  const user = /^User: (.*)$/m.exec(prompt)?.[1] ?? "";
  const words = user.match(/[\p{L}\p{N}]+/gu) ?? [];
  return words.length === 0 ? "SKIP" : `About ${words.slice(0, 5).join(" ")}`;
}

/** The first scenario word in the prompt (in prompt order) wins; anything else gets the greeting. */
export function pickScenario(prompt: string): ScenarioName {
  for (const word of prompt.toLowerCase().match(/[a-z]+/g) ?? []) {
    const hit = SCENARIO_WORDS.find((w) => w === word);
    if (hit) return hit;
  }
  return "hello";
}

export const THINKING: Record<ScenarioName, string> = {
  hello:
    "The user said hello or asked something I have no script for. I will introduce myself and list the scenarios.",
  table: "A comparison of message limits reads best as a table. Five platforms, four columns.",
  long: "This needs a long, structured answer. I will use headings, lists and code blocks so it has to be split.",
  tool: "To save the notes I need to write a file. Writing is an edit, so I must ask for permission first.",
  options: "There are two reasonable choices here. I will explain both and offer quick replies.",
  slow: "I will count slowly, one step at a time, and check for a cancel or a steer between steps.",
  secret: "The deploy script reads its credentials from an env file. I will show what it contains.",
  model: "The user asks which model is answering. I will name the one selected for this session.",
};

const FENCE = "```";

export const GREETING = `Hi! I'm **parley's demo agent**, a scripted stand-in for a real coding agent, so every part of the chat bridge can be tried without an API key.

Send a message containing one of these words to see a scenario:

- \`table\`: a markdown table
- \`long\`: an answer of about 12,000 characters that has to be split
- \`tool\`: a tool call that asks for your permission first
- \`options\`: an answer that ends in quick-reply choices
- \`slow\`: a slow stream you can cancel or steer
- \`secret\`: output with a fake credential, to show redaction
- \`model\`: which of my pretend models is answering (switch it with the model command)

The \`/compact\` command shrinks my pretend context: watch the usage figure drop.

This is how parley starts me:

${FENCE}bash
node dist/providers/demo-agent.js   # speaks ACP over stdin/stdout
${FENCE}`;

export const TABLE_ANSWER = `Here is how the chat platforms compare on the limits that shape a streamed answer:

| Platform | Max message | Edits | Choice widgets |
|---|---:|:---:|---|
| Telegram | 4,096 chars | yes | inline keyboard |
| Discord | 2,000 chars | yes | buttons, 5 per row |
| Slack | 40,000 chars | yes | Block Kit buttons |
| Webex | 7,439 bytes | 10 per message | Adaptive Card |
| WhatsApp | 4,096 chars | no | 3 reply buttons |

Tables render poorly on phones, so some channels may show this one as a list instead.`;

export const OPTIONS_ANSWER = `The nightly report can run in one of two places:

1. **A cron job on this machine**: five minutes to set up, but it stops when the laptop sleeps.
2. **A scheduled CI workflow**: a little more setup, and it runs whether or not anyone is online.

I'd start with the cron job and move it to CI once the report is stable. Shall I set up the cron job now?

[OPTIONS: Yes | No | Maybe]`;

export const SECRET_ANSWER = `Found it: the deploy script reads its credentials from \`.env.production\`:

${FENCE}ini
AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE
AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY
AWS_REGION=eu-west-1
${FENCE}

These are the sample keys from AWS's own documentation, not live ones: the scenario exists to show that parley redacts credentials before they reach a chat. A key that was ever committed should be rotated and loaded from a secret manager instead.`;

/** The demo's pretend models: its session config option of category "model" offers these. */
export const DEMO_MODEL_CONFIG_ID = "model";
export const DEMO_MODELS: readonly { value: string; name: string; description: string }[] = [
  { value: "demo-swift", name: "Demo Swift", description: "Quick, terse answers (the default)" },
  { value: "demo-deep", name: "Demo Deep", description: "Slower, more thorough answers" },
  { value: "demo-tiny", name: "Demo Tiny", description: "The cheapest pretend model" },
];
export const DEFAULT_DEMO_MODEL = "demo-swift";

/** The `model` scenario's answer: the selected model, by name. */
export function modelAnswer(modelId: string): string {
  const model = DEMO_MODELS.find((m) => m.value === modelId);
  return `Model: ${model?.name ?? modelId}`;
}

/** The prompt that runs the advertised compaction command (a slash command is sent as prompt text). */
/**
 * What the demo says first when files came with the prompt (as links, or as image blocks for an
 * agent that accepts them), so uploading something visibly reaches the agent. "" when none did.
 */
export function receivedNote(prompt: readonly { type: string; name?: unknown }[]): string {
  const names = prompt.flatMap((b) => {
    if (b.type === "resource_link") return [typeof b.name === "string" && b.name ? b.name : "a file"];
    return b.type === "image" ? ["an image"] : [];
  });
  if (names.length === 0) return "";
  return `📎 I received ${names.length === 1 ? "one file" : `${names.length} files`}: ${names.join(", ")}.`;
}

export function isCompactCommand(prompt: string): boolean {
  return /^\/compact(?:\s|$)/.test(prompt.trim());
}

/** What the demo's compaction keeps of the conversation. */
export const COMPACTION_SUMMARY =
  "Summary of the conversation so far: the user tried the demo scenarios; nothing is pending.";
/** Tokens left in context after a compaction (the summary plus the pretend system prompt). */
export const COMPACTED_TOKENS = 3_000;

export const TOOL_CALL = {
  toolCallId: "call-write-notes",
  title: "Write notes.md",
  kind: "edit",
  path: "notes.md",
  description: "Save a summary of this conversation to notes.md",
} as const;

export function toolVerdictText(kind: string | undefined): string {
  if (kind === "allow_once" || kind === "allow_always") {
    return `Permission approved (${kind}): I wrote the summary to \`notes.md\`.\n\n${FENCE}markdown\n# Notes\n\n- Tried the demo agent's tool scenario\n- The permission request was approved from chat\n${FENCE}\n\n(This is a demo: nothing was written to disk.)`;
  }
  if (kind === "reject_once" || kind === "reject_always") {
    return `Permission denied (${kind}): I left \`notes.md\` untouched. Ask again whenever you want the notes saved.`;
  }
  return "Permission answer not understood: I did not touch `notes.md`.";
}

export const SLOW_STEPS = 40;
export const SLOW_STEP_MS = 250;

export function slowLines(): string[] {
  const lines = ["Checking the modules one by one (about ten seconds; cancel or steer me any time):", ""];
  for (let i = 1; i <= SLOW_STEPS; i++) {
    const n = String(i).padStart(2, "0");
    lines.push(`- step ${i} of ${SLOW_STEPS}: \`src/module-${n}.ts\` looks fine`);
  }
  lines.push("", "All forty modules checked.");
  return lines;
}

interface LongSection {
  title: string;
  intro: string;
  detail: string;
  points: string[];
  lang: string;
  code: string;
}

const LONG_SECTIONS: LongSection[] = [
  {
    title: "Why long answers need splitting",
    detail:
      "The cut points matter as much as the sizes. A split in the middle of a sentence is readable; a split in the middle of a link, a table row or an inline code span is not. A good splitter therefore knows a little markdown: enough to see where a construct begins and ends, and to prefer the boundary just before it.",
    intro:
      "Every chat platform caps the size of a single message, and the caps differ by an order of magnitude. An answer that fits comfortably in Slack is three messages on Discord. A bridge that truncates silently loses the end of the answer, which is usually the conclusion the user asked for.",
    points: [
      "Split at paragraph boundaries first, then at line breaks, and only then inside a line.",
      "Never cut inside a multi-byte character or a grapheme cluster.",
      "Report any part that failed to send instead of assuming it landed.",
    ],
    lang: "ts",
    code: `function fits(text: string, limit: number): boolean {\n  return [...text].length <= limit;\n}`,
  },
  {
    title: "Keeping code fences balanced",
    detail:
      "Nested fences make this harder than it looks. A block opened with four backticks may contain a line of three, and that line does not close it. Tildes work too. The splitter has to remember the exact opening marker, compare lengths, and ignore anything indented deeply enough to be an indented code block.",
    intro:
      "A code block cut in half is the most visible failure of a naive splitter: the second message renders as prose and the first swallows everything after it. The fix is mechanical. Close the fence at the cut, and reopen it with the same info string at the top of the next part.",
    points: [
      "Track whether the cut point is inside a fence and which marker opened it.",
      "Reopen with the same language tag so highlighting survives.",
      "Count the closing and reopening markers against the limit, too.",
    ],
    lang: "python",
    code: `def reopen(chunk: str, fence: str) -> str:\n    return f"{fence}\\n{chunk}"`,
  },
  {
    title: "Streaming without flooding",
    detail:
      "Rate limits are rarely documented precisely, and they change. Treat a 429 answer as information: wait for the time the platform asks for, then resume with the latest buffer rather than replaying every missed frame. The user only ever needs the newest version of the message.",
    intro:
      "Agents emit tokens far faster than platforms accept edits. Editing on every chunk burns through rate limits in seconds and then stalls the stream entirely. Throttling to a steady pace keeps the message moving and leaves headroom for the final edit.",
    points: [
      "Edit at most once per second on platforms with strict limits.",
      "Coalesce chunks that arrive between edits into one update.",
      "Always reserve budget for the final, complete version of the message.",
    ],
    lang: "ts",
    code: `let timer: NodeJS.Timeout | undefined;\nfunction schedule(flush: () => void): void {\n  timer ??= setTimeout(() => {\n    timer = undefined;\n    flush();\n  }, 1000);\n}`,
  },
  {
    title: "Tables on small screens",
    detail:
      "Alignment markers in the separator row carry meaning too: numbers read better right-aligned. When a table becomes a list, keep the numbers' units next to them, because the column header that explained them is no longer directly above.",
    intro:
      "A five-column table that reads well on a desktop becomes a wall of pipes on a phone. Channels without native table rendering are better served by a list per row, or by a monospaced grid inside a code block when the columns are short.",
    points: [
      "Keep the header row: it names the fields in the list form.",
      "Prefer a grid only when every row fits the narrowest screen.",
      "Never split a table across two messages without repeating the header.",
    ],
    lang: "text",
    code: `Platform: Telegram\n  Max message: 4,096 chars\n  Edits: yes`,
  },
  {
    title: "Permission prompts people can answer",
    detail:
      "The choice must map back to what the agent offered by meaning, not by position or by the agent's own identifiers. An agent may call its options anything; what matters is whether each one allows once, allows always, or rejects. Choosing by kind keeps a tap on Deny from ever becoming an approval.",
    intro:
      "An agent that asks before writing a file is only useful if the question reaches a person who can answer it. The prompt must say what the tool will do, offer the choices the agent offered, and time out to a safe default rather than hanging the turn forever.",
    points: [
      "Show the tool title and its stated purpose, redacted like any other text.",
      "Bind buttons to a one-time nonce so a stale tap cannot approve a new request.",
      "Treat silence as a refusal, and say so in the chat.",
    ],
    lang: "json",
    code: `{\n  "outcome": { "outcome": "selected", "optionId": "reject" }\n}`,
  },
  {
    title: "Cancelling a turn",
    detail:
      "An agent that ignores the request must not be able to hold the conversation hostage. Once the grace period is spent the bridge closes the agent's input, sends a polite signal, waits a little longer, and then stops it for good, making sure the process is reaped so no zombie is left behind.",
    intro:
      "Users cancel because the agent went the wrong way, and they expect the stream to stop at once. The protocol makes cancellation cooperative: the client asks, the agent winds down and reports a cancelled stop reason. A bridge still needs a hard stop for the agent that never answers.",
    points: [
      "Send the cancel notification first, then answer pending permission requests as cancelled.",
      "Keep applying updates until the turn ends; late output still belongs to it.",
      "After a grace period, stop the process and end the turn yourself.",
    ],
    lang: "bash",
    code: `kill -TERM "$AGENT_PID"\nsleep 2\nkill -KILL "$AGENT_PID" 2>/dev/null || true`,
  },
  {
    title: "Steering a running turn",
    detail:
      "Timing is subtle here. The turn can end in the instant between the user pressing send and the steer arriving. An agent that honours the idle guard answers that it needs a fresh prompt, and the bridge then delivers the message as the start of the next turn instead.",
    intro:
      "Sometimes the user does not want to stop the agent, only to nudge it: a missing detail, a changed requirement. Steering folds that message into the running turn instead of queueing it behind the answer. It must never start a turn of its own when nothing is running, or its output would go nowhere.",
    points: [
      "Steer only while a prompt is genuinely in flight.",
      "Ask the agent to refuse idle steers rather than start a detached turn.",
      "Acknowledge the steer in the stream so the user sees it was heard.",
    ],
    lang: "json",
    code: `{\n  "sessionId": "demo-1",\n  "prompt": [{ "type": "text", "text": "use tabs" }],\n  "_meta": { "steering": { "idleBehavior": "promptRequired" } }\n}`,
  },
  {
    title: "Redacting before display",
    detail:
      "Chunked text is the hard case: a key can arrive split across two chunks, and neither half looks like a key on its own. Redacting the accumulated buffer rather than each chunk closes that gap, at the cost of holding back a short tail until the next chunk shows whether it completes a secret.",
    intro:
      "Agents read configuration files and echo what they find. Anything that looks like a credential has to be removed before the text reaches a chat, where it would be stored, indexed and notified to people's phones. Redaction runs on every output path: answer text, thinking, tool titles and the labels of quick-reply buttons.",
    points: [
      "Redact before any formatting that could split a key across two tokens.",
      "Replace the whole secret with a fixed marker so nothing partial survives.",
      "Apply the same rules to text that arrives in many small chunks.",
    ],
    lang: "ts",
    code: `const MARKER = "[REDACTED: credential]";\nconst redacted = text.replace(/AKIA[0-9A-Z]{16}/g, MARKER);`,
  },
  {
    title: "Quick replies as buttons",
    detail:
      "The labels come from the model, so they are untrusted text like everything else it writes. A label that starts with a slash must not turn into a command when tapped, and a label that contains a credential must be redacted like the answer around it.",
    intro:
      "When an answer ends with a short list of choices, a tap is faster than typing. The agent marks the choices with a trailer on the last line, and each channel renders them with whatever widget it has: inline keyboards, buttons, cards, or a numbered list as the floor.",
    points: [
      "Parse the trailer once, in one place, and share the result with every channel.",
      "Cap the number of buttons per platform and number the overflow in the text.",
      "Send the chosen label back as an ordinary message, never as a command.",
    ],
    lang: "text",
    code: `Reply with a number:\n1. Deploy now\n2. Wait for review\n3. Cancel`,
  },
  {
    title: "Surviving restarts",
    detail:
      "The agent process is part of that state. A restarted bridge starts a fresh agent, so anything the old one held in memory is gone; saying so plainly in the chat is better than answering as if the conversation had never been interrupted.",
    intro:
      "A bridge restarts: deploys, crashes, laptops closing. Messages that arrived while it was down should be handled once, not lost and not replayed hours later. That means advancing a cursor only after the message is durably recorded, and deduplicating redeliveries by the platform's own message id.",
    points: [
      "Write first, acknowledge second.",
      "Drop messages older than a sensible window instead of answering them late.",
      "Keep session state in files written atomically, so a crash never leaves half a record.",
    ],
    lang: "ts",
    code: `await writeFile(tmp, JSON.stringify(state));\nawait rename(tmp, path); // atomic on POSIX`,
  },
];

/** About 12,000 characters of structured markdown: headings, lists and code fences. */
export function longAnswer(): string {
  const parts = [
    "# A field guide to agent output in chat",
    "This guide walks through what a bridge between a coding agent and a chat app has to get right. Each section states the problem, the rules that solve it, and a small example.",
  ];
  LONG_SECTIONS.forEach((s, i) => {
    parts.push(`## ${i + 1}. ${s.title}`, s.intro, s.detail, "What to do:");
    parts.push(s.points.map((p, j) => `${j + 1}. ${p}`).join("\n"));
    parts.push(`${FENCE}${s.lang}\n${s.code}\n${FENCE}`);
    parts.push(
      `In short: ${s.points[0]?.toLowerCase() ?? ""} The rest follows from taking the user's screen, the platform's limits and the agent's pace seriously at the same time.`,
    );
  });
  parts.push(
    "## Checklist",
    LONG_SECTIONS.map((s) => `- [ ] ${s.title}`).join("\n"),
    "That is the whole guide. Each rule is small on its own; together they decide whether a bridge feels trustworthy.",
  );
  return parts.join("\n\n");
}
