/**
 * How to launch the bundled demo agent as a subprocess: compiled JS runs on plain node, the
 * TypeScript source (dev, tests) through tsx's loader. Layer: providers (node built-ins only).
 */
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";

export interface AgentCommand {
  command: string;
  args: string[];
}

/** The demo agent beside this module; `.ts` when parley itself runs from source. */
export function demoAgentCommand(): AgentCommand {
  const fromSource = import.meta.url.endsWith(".ts");
  const script = fileURLToPath(new URL(fromSource ? "./demo-agent.ts" : "./demo-agent.js", import.meta.url));
  if (!fromSource) return { command: process.execPath, args: [script] };
  // An absolute loader URL, because the agent's cwd (its session directory) may hold no node_modules.
  const loader = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
  return { command: process.execPath, args: ["--import", loader, script] };
}
