/** The one /model flow's text: display-safe agent strings, one size rule, descriptions dropped to fit. */
import { describe, expect, it } from "vitest";
import {
  MODEL_PICKER_MAX,
  modelButtonLabels,
  modelListText,
  resolveModelArg,
} from "../../../src/messaging/channel/model-picker.js";
import type { ModelMenu } from "../../../src/messaging/session/agent-controls.js";

const many = (n: number, description?: string): ModelMenu => ({
  configId: "model",
  current: undefined,
  options: Array.from({ length: n }, (_, i) => ({
    id: `m${i}`,
    name: `Model ${i}`,
    ...(description ? { description } : {}),
  })),
});

describe("the model list", () => {
  it("offers at most MODEL_PICKER_MAX and says how many more there are", () => {
    const menu = many(30);
    expect(MODEL_PICKER_MAX).toBe(24);
    expect(modelButtonLabels(menu)).toHaveLength(24);
    const shown = modelListText(menu, "Pick one below.");
    expect(shown.startsWith("**Model**: agent default\n1. **Model 0**\n")).toBe(true);
    expect(shown).toContain("24. **Model 23**\n…and 6 more not shown\n\nPick one below.");
    expect(shown).not.toContain("Model 24");
  });

  it("drops descriptions rather than exceed one message", () => {
    const long = modelListText(many(24, "x".repeat(200)), "Pick one below.", 3000);
    expect(Array.from(long).length).toBeLessThanOrEqual(3000);
    expect(long).toContain("24. **Model 23**\n\nPick one below.");
    expect(modelListText(many(2, "fast"), "hint", 3000)).toContain("2. **Model 1** — fast");
  });

  it("agent text is one line, bounded and display-safe: a planted key never reaches a label", () => {
    const odd: ModelMenu = {
      configId: "model",
      current: "x",
      options: [
        { id: "x", name: "<b>big</b>\nmodel", description: "a & b" },
        { id: "k", name: "key AKIA**Q7ZR**3M5TXW2KP9VB @everyone" },
      ],
    };
    expect(modelListText(odd, "h")).toContain("1. **<b>big</b> model** ✓ — a & b");
    const labels = modelButtonLabels(odd);
    expect(labels[0]).toBe("✓ <b>big</b> model");
    expect(labels.join(" ")).not.toMatch(/Q7ZR|3M5TXW2KP9VB/);
    expect(labels[1]).not.toContain("@everyone");
    expect(modelListText(odd, "h")).not.toMatch(/3M5TXW2KP9VB/);
  });

  it("/model <arg>: a position, an id or a name; anything else lists the choices", () => {
    const menu = many(3);
    expect(resolveModelArg(menu, "2", "h")).toEqual({ option: menu.options[1] });
    expect(resolveModelArg(menu, " M2 ", "h")).toEqual({ option: menu.options[2] });
    expect(resolveModelArg(menu, "model 0", "h")).toEqual({ option: menu.options[0] });
    const refused = resolveModelArg(menu, "gpt-9", "hint");
    expect("reply" in refused && refused.reply).toMatch(
      /^No single model matches "gpt-9"\.\n\n\*\*Model\*\*/,
    );
  });
});
