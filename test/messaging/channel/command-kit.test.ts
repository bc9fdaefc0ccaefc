/** The command kit: one table, one parse, help and usage derived from it. */
import { describe, expect, it } from "vitest";
import { commandTable, defineCommands } from "../../../src/messaging/channel/command-kit.js";

describe("command kit", () => {
  const table = commandTable(["new", "stop", "queue", "help"]);

  it("parses every prefix and alias once; unknown names are text unless the grammar flags them", () => {
    const kit = defineCommands(table, { prefixes: ["!", "/"], flagUnknownFor: ["!"] });
    expect(kit.parse("!reset")).toMatchObject({ kind: "command", spec: { name: "new" } });
    expect(kit.parse("/CANCEL now")).toMatchObject({ kind: "command", spec: { name: "stop" }, arg: "now" });
    expect(kit.parse("/queue /new")).toMatchObject({
      spec: { name: "queue", override: "queue" },
      arg: "/new",
    });
    expect(kit.parse("!stpo")).toEqual({ kind: "unknown", name: "stpo" });
    expect(kit.parse("/stpo")).toBeNull();
    expect(kit.parse("/etc/hosts")).toBeNull();
    expect(kit.parse("say !new")).toBeNull();
  });

  it("the bot's handle form: ours is a command, another bot's is foreign, read per parse", () => {
    let handle: string | null = null;
    const kit = defineCommands(table, { prefixes: ["/"], botHandle: () => handle });
    expect(kit.parse("/new@parley_bot")).toEqual({ kind: "foreign" });
    handle = "Parley_Bot";
    expect(kit.parse("/new@parley_bot")).toMatchObject({ kind: "command", spec: { name: "new" } });
    expect(kit.parse("/nope@other_bot")).toBeNull();
  });

  it("help and usage come from the table, spelled with the shown prefix", () => {
    const kit = defineCommands(table, { prefixes: ["!", "/"] });
    expect(kit.usage(table[2] as never)).toBe("Usage: `!queue <message>`");
    const help = kit.help("footer line");
    expect(help.split("\n")[0]).toBe("**Commands** (`!` or `/`)");
    for (const spec of table) expect(help).toContain(`\`!${spec.name}`);
    expect(help).toContain("(also `!reset`)");
    expect(help.endsWith("\n\nfooter line")).toBe(true);
  });

  it("a table is validated once: a name defined twice, or not a word, is refused", () => {
    expect(() =>
      defineCommands(
        [
          { name: "new", help: "a" },
          { name: "fresh", aliases: ["new"], help: "b" },
        ],
        { prefixes: ["/"] },
      ),
    ).toThrow(/defined twice/);
    expect(() => defineCommands([{ name: "two words", help: "a" }], { prefixes: ["/"] })).toThrow(
      /not a word/,
    );
    expect(() => commandTable(["nonesuch"])).toThrow(/no shared command/);
  });
});
