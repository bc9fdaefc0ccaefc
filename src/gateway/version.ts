/** parley's version: package.json's, read from the package root (two levels above src/ or dist/). */
import { readFileSync } from "node:fs";

export function parleyVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
    version?: unknown;
  };
  return typeof manifest.version === "string" ? manifest.version : "unknown";
}
