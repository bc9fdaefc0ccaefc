/**
 * What every parley MCP server shares: tool definitions from zod schemas (validated on the way in,
 * published as JSON Schema), and results that are text for the model. A tool that refuses says so
 * as an error result the model reads, never a silent success. Layer: mcp.
 */
import { z } from "zod";

export const PARLEY_MCP_VERSION = "0.1.0";

export interface ToolResult {
  [key: string]: unknown;
  content: { type: "text"; text: string }[];
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
}

export function ok(text: string, structured?: Record<string, unknown>): ToolResult {
  return { content: [{ type: "text", text }], ...(structured ? { structuredContent: structured } : {}) };
}

export function refused(text: string, structured?: Record<string, unknown>): ToolResult {
  return {
    content: [{ type: "text", text }],
    isError: true,
    ...(structured ? { structuredContent: structured } : {}),
  };
}

export interface ToolDef<S extends z.ZodObject = z.ZodObject> {
  name: string;
  description: string;
  schema: S;
  run(args: z.infer<S>): Promise<ToolResult>;
}

export function tool<S extends z.ZodObject>(def: ToolDef<S>): ToolDef {
  return def as unknown as ToolDef;
}

/** The tools/list entry of a tool. */
export function listed(def: ToolDef): {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
} {
  const schema = z.toJSONSchema(def.schema) as Record<string, unknown>;
  delete schema.$schema;
  return { name: def.name, description: def.description, inputSchema: schema };
}

/** Validate and run one tools/call; bad arguments are an error result naming what was wrong. */
export async function callTool(defs: readonly ToolDef[], name: string, args: unknown): Promise<ToolResult> {
  const def = defs.find((d) => d.name === name);
  if (!def) return refused(`No tool named "${name}".`);
  const parsed = def.schema.safeParse(args ?? {});
  if (!parsed.success)
    return refused(
      `Invalid arguments for ${name}: ${parsed.error.issues.map((i) => `${i.path.join(".") || "(args)"}: ${i.message}`).join("; ")}`,
    );
  return def.run(parsed.data);
}
