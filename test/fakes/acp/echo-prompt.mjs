// Describes every prompt block it receives, one line each, so a test can see what crossed the ACP
// wire: text verbatim, an image as its mime type + a sha256 prefix of the decoded data, a
// resource_link as its name + a sha256 prefix of the linked file as it is right now (or "missing")
// + its path. Declares promptCapabilities.image unless started with "no-image".
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { say, serve } from "./lib.mjs";

const image = process.argv[2] !== "no-image";
// A short digest: enough to tell files apart, too short to look like a credential to the redactor.
const sha = (bytes) => createHash("sha256").update(bytes).digest("hex").slice(0, 12);

function describe(block) {
  if (block.type === "text") return `text: ${block.text}`;
  if (block.type === "image") return `image ${block.mimeType} ${sha(Buffer.from(block.data, "base64"))}`;
  if (block.type === "resource_link") {
    const path = fileURLToPath(block.uri);
    const here = existsSync(path);
    return `link ${block.name} ${block.mimeType} ${here ? sha(readFileSync(path)) : "missing"} at ${path}`;
  }
  return `other ${block.type}`;
}

serve({
  initialize: async () => ({
    protocolVersion: 1,
    agentCapabilities: { promptCapabilities: { image, audio: false, embeddedContext: false } },
    authMethods: [],
  }),
  "session/prompt": async ({ sessionId, prompt }) => {
    say(sessionId, prompt.map(describe).join("\n"));
    return { stopReason: "end_turn" };
  },
});
