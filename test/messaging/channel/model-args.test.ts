import { describe, expect, it } from "vitest";
import { modelListText, resolveModelArg as resolve } from "../../../src/messaging/channel/model-picker.js";
import type { ModelMenu } from "../../../src/messaging/session/agent-controls.js";

const MODEL_HINT = "Send `/model <number or name>` to switch.";
const resolveModelArg = (menu: ModelMenu, arg: string) => resolve(menu, arg, MODEL_HINT);

const MENU: ModelMenu = {
  configId: "model",
  current: "swift",
  options: [
    { id: "swift", name: "Swift" },
    { id: "deep", name: "Deep Thought", description: "slower, more careful" },
    { id: "tiny-1", name: "Tiny" },
  ],
};

const picked = (arg: string, menu: ModelMenu = MENU) => {
  const r = resolveModelArg(menu, arg);
  return "option" in r ? r.option.id : null;
};

describe("/model: the list", () => {
  it("numbers the options from 1, marks the current one, ends with the hint", () => {
    expect(modelListText(MENU, MODEL_HINT)).toBe(
      [
        "**Model**: Swift",
        "1. **Swift** ✓",
        "2. **Deep Thought** — slower, more careful",
        "3. **Tiny**",
        "",
        MODEL_HINT,
      ].join("\n"),
    );
  });

  it("says so when the agent reports no current model, and flattens agent text to one bounded line", () => {
    const text = modelListText(
      {
        configId: "model",
        current: undefined,
        options: [{ id: "a", name: `A\n\n# heading ${"x".repeat(200)}`, description: "line one\nline two" }],
      },
      MODEL_HINT,
    );
    const lines = text.split("\n");
    expect(lines[0]).toBe("**Model**: agent default");
    expect(lines[1]).toMatch(/^1\. \*\*A # heading x+…\*\* — line one line two$/);
    expect(Array.from(lines[1] ?? "").length).toBeLessThan(120);
  });
});

describe("/model: resolving the argument", () => {
  it("a number is a 1-based position in the list", () => {
    expect(picked("1")).toBe("swift");
    expect(picked("2")).toBe("deep");
    expect(picked(" 3 ")).toBe("tiny-1");
  });

  it("a name or id matches case- and whitespace-insensitively", () => {
    expect(picked("deep thought")).toBe("deep");
    expect(picked("DEEP   THOUGHT")).toBe("deep");
    expect(picked("Tiny-1")).toBe("tiny-1");
    expect(picked("tiny")).toBe("tiny-1");
  });

  it("an id wins over another option's identical name", () => {
    const menu: ModelMenu = {
      configId: "model",
      current: undefined,
      options: [
        { id: "a", name: "fast" },
        { id: "fast", name: "Something else" },
      ],
    };
    expect(picked("fast", menu)).toBe("fast");
  });

  it("out of range, unknown, partial or ambiguous is refused with the valid choices listed", () => {
    for (const arg of ["0", "4", "99999999999999999999", "gpt-9", "dee", "-1"]) {
      const r = resolveModelArg(MENU, arg);
      expect(r).toEqual({ reply: expect.stringContaining(`No single model matches "${arg}".`) });
      expect("reply" in r && r.reply).toContain(
        "1. **Swift** ✓\n2. **Deep Thought** — slower, more careful\n3. **Tiny**",
      );
      expect("reply" in r && r.reply).toContain(MODEL_HINT);
    }
    const twins: ModelMenu = {
      configId: "model",
      current: undefined,
      options: [
        { id: "a", name: "Same" },
        { id: "b", name: "same" },
      ],
    };
    expect(picked("same", twins)).toBeNull();
    expect(picked("b", twins)).toBe("b");
  });

  it("a long argument is echoed back bounded, on one line", () => {
    const r = resolveModelArg(MENU, `${"y".repeat(300)}\nmore`);
    expect("reply" in r).toBe(true);
    const first = ("reply" in r ? r.reply : "").split("\n")[0] ?? "";
    expect(first).toMatch(/^No single model matches "y+…"\.$/);
    expect(first.length).toBeLessThan(130);
  });
});
