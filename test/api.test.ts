/**
 * The public API snapshot: src/index.ts lists its exports by name, and docs/api.md documents
 * exactly those names. A change to either without the other fails here; the import check proves
 * every runtime name really exists.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import * as api from "../src/index.js";

const index = readFileSync(new URL("../src/index.ts", import.meta.url), "utf8");
const doc = readFileSync(new URL("../docs/api.md", import.meta.url), "utf8");

/** Every name an `export { … }` or `export type { … }` of src/index.ts lists (no `export *`). */
function exported(source: string): { names: string[]; types: Set<string> } {
  const names: string[] = [];
  const types = new Set<string>();
  for (const m of source.matchAll(/export (type )?\{([^}]*)\} from/g)) {
    for (const raw of (m[2] as string).split(",")) {
      const item = raw.trim();
      if (!item) continue;
      const isType = m[1] !== undefined || item.startsWith("type ");
      const name = item
        .replace(/^type\s+/, "")
        .split(/\s+as\s+/)
        .pop() as string;
      names.push(name);
      if (isType) types.add(name);
    }
  }
  return { names, types };
}

describe("the public API", () => {
  const { names, types } = exported(index);

  it("is listed by name: no export * anywhere in src/index.ts", () => {
    expect(index).not.toMatch(/export \*/);
    expect(new Set(names).size).toBe(names.length);
  });

  it("docs/api.md documents exactly the exported names", () => {
    const documented = [...doc.matchAll(/^\| `([A-Za-z_][\w]*)` \|/gm)].map((m) => m[1] as string);
    expect(new Set(documented).size).toBe(documented.length);
    expect([...documented].sort()).toEqual([...names].sort());
  });

  it("every runtime name exists on the module, and the doc says which are types", () => {
    for (const name of names) {
      const kind = new RegExp(`^\\| \`${name}\` \\| (\\w+) \\|`, "m").exec(doc)?.[1];
      if (types.has(name)) expect(kind, name).toBe("type");
      else {
        expect(kind, name).not.toBe("type");
        expect((api as Record<string, unknown>)[name], name).toBeDefined();
      }
    }
  });
});
