import { afterEach, describe, expect, it } from "vitest";
import type { Stack } from "./helpers.js";
import { done, seen, startStack, text, visible } from "./helpers.js";

let stack: Stack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

describe("teams end to end", () => {
  it("a message from an allow-listed user is answered in their personal chat", async () => {
    stack = await startStack({ turns: [[text("Hello **Alice**!"), done]] });
    const { fake, driver, alice } = stack;
    const res = await driver.post(driver.message(alice, "hi"));
    expect(res.status).toBe(200);
    await seen(fake, /Hello \*\*Alice\*\*![\s\S]*Finished in/);
    console.log(
      visible(fake),
      fake.calls.map((c) => `${c.method} ${c.path} ${c.status}`),
    );
  });
});
