/** One COMMAND_SPEC drives parsing, /help and the setMyCommands menu; approval callback data. */
import { describe, expect, it } from "vitest";
import {
  approvalData,
  approvalKeyboard,
  modelKeyboard,
  optionLabel,
  optionsKeyboard,
  parseApprovalData,
  parseModelData,
} from "../../src/telegram/buttons.js";
import { menuCommands, TELEGRAM_COMMANDS, telegramCommands } from "../../src/telegram/commands.js";
import { isReactionEmoji, REACTION_EMOJI } from "../../src/telegram/limits.js";

const kit = telegramCommands(() => "parley_bot");

describe("the command table", () => {
  it("covers the issue's command list", () => {
    const names = TELEGRAM_COMMANDS.map((s) => s.name).sort();
    expect(names).toEqual(
      [
        "compact",
        "help",
        // issue 16: every channel lists its conversation's history.
        "history",
        "incognito",
        "link",
        "model",
        "new",
        "queue",
        "sessions",
        "status",
        "steer",
        "stop",
        "temporary",
        "title",
        "unlink",
        "yolo",
        // issue 20: scheduled prompts.
        "every",
        "at",
        "jobs",
        "unschedule",
      ].sort(),
    );
    expect(kit.parse("/cancel")).toMatchObject({ kind: "command", spec: { name: "stop" } });
  });

  it("every table entry parses, is in the menu and in /help, and nothing else is", () => {
    const menu = menuCommands();
    const help = kit.help();
    expect(menu.map((m) => m.command)).toEqual(TELEGRAM_COMMANDS.map((s) => s.name));
    for (const spec of TELEGRAM_COMMANDS) {
      expect(kit.parse(`/${spec.name}`)).toMatchObject({ kind: "command", spec });
      expect(help).toContain(`/${spec.name}`);
      // Telegram's menu grammar: lowercase, digits, underscore; 1-32; a non-empty description.
      expect(spec.name).toMatch(/^[a-z0-9_]{1,32}$/);
    }
    for (const m of menu) expect(m.description.length).toBeGreaterThanOrEqual(3);
  });

  it("honours /cmd@bot only for this bot; a path is not a command", () => {
    expect(kit.parse("/new@Parley_Bot")).toMatchObject({ kind: "command", spec: { name: "new" } });
    expect(kit.parse("/new@other_bot")).toEqual({ kind: "foreign" });
    expect(kit.parse("/etc/hosts is a file")).toBeNull();
    expect(kit.parse("/unknown")).toBeNull();
    expect(kit.parse("/queue /new")).toMatchObject({ spec: { name: "queue" }, arg: "/new" });
  });
});

describe("approval callback_data", () => {
  const nonce = "AbCdEfGhIjKlMnOpQrStUv"; // 22 chars, like newApprovalNonce
  const options = [
    { id: "a", label: "Allow", verdict: "approve" as const },
    { id: "t", label: "Always", verdict: "approve_always" as const },
    { id: "d", label: "Deny", verdict: "deny" as const },
  ];

  it("a:<request_id>:<nonce>:<1|0|t>, all three sharing the nonce, within 64 bytes", () => {
    const kb = approvalKeyboard("r-17", nonce, options);
    expect(kb?.inline_keyboard[0]?.map((b) => b.callback_data)).toEqual([
      `a:r-17:${nonce}:1`,
      `a:r-17:${nonce}:t`,
      `a:r-17:${nonce}:0`,
    ]);
    const longest = "x".repeat(64 - `a::${nonce}:t`.length);
    expect(Buffer.byteLength(approvalData(longest, nonce, "approve_always"))).toBe(64);
    expect(approvalKeyboard(longest, nonce, options)).not.toBeNull();
    // One byte more and the prompt gets no buttons rather than a truncated id.
    expect(approvalKeyboard(`${longest}x`, nonce, options)).toBeNull();
    expect(approvalKeyboard("é".repeat(20), nonce, options)).toBeNull();
  });

  it("parses right to left, so an id holding ':' survives and a nonce-less button fails closed", () => {
    expect(parseApprovalData(`a:sess:7:${nonce}:0`)).toEqual({ requestId: "sess:7", nonce, verdict: "deny" });
    // A button minted before nonces existed: part of the id lands where the nonce belongs.
    expect(parseApprovalData("a:sess:7:1")).toEqual({ requestId: "sess", nonce: "7", verdict: "approve" });
    expect(parseApprovalData("a:7:1")).toBeNull();
    expect(parseApprovalData(`a:7:${nonce}:x`)).toBeNull();
    expect(parseApprovalData("o:1")).toBeNull();
  });

  it("options buttons carry an index; the label comes back from the message's keyboard", () => {
    const kb = optionsKeyboard(["Yes", "No", "Maybe"]);
    expect(kb.inline_keyboard).toHaveLength(2);
    expect(optionLabel("o:2", kb)).toBe("Maybe");
    expect(optionLabel("o:7", kb)).toBeNull();
    expect(optionLabel("o:1; drop", kb)).toBeNull();
  });
});

describe("model picker callback_data", () => {
  it("m:<index>, two buttons per row; the parse takes exactly m:<digits>", () => {
    const kb = modelKeyboard(["✓ Swift", "Deep", "Wide"]);
    expect(kb.inline_keyboard).toEqual([
      [
        { text: "✓ Swift", callback_data: "m:0" },
        { text: "Deep", callback_data: "m:1" },
      ],
      [{ text: "Wide", callback_data: "m:2" }],
    ]);
    expect(parseModelData("m:2")).toBe(2);
    expect(parseModelData("m:23")).toBe(23);
    for (const data of ["m:", "m:-1", "m:1; drop", "m:1234", "o:1", `a:r1:${"n".repeat(22)}:1`])
      expect(parseModelData(data)).toBeNull();
    expect(parseApprovalData("m:1")).toBeNull();
  });
});

describe("reaction set", () => {
  it("has 73 members and matches VS16 spellings", () => {
    expect(REACTION_EMOJI.size).toBe(73);
    expect(isReactionEmoji("❤️")).toBe(true);
    expect(isReactionEmoji("❤")).toBe(true);
    expect(isReactionEmoji("✅")).toBe(false);
    expect(isReactionEmoji("🤖")).toBe(false);
  });
});
