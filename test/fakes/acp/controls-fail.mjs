// Advertises a model selector (grouped choices, after a mode selector and a boolean "model" toggle)
// and a `compact` command, but session/set_config_option fails (with argv "hang": is never
// answered) and the /compact prompt fails. A prompt containing "switch" changes the model itself
// and reports it with config_option_update. With argv "die" the process exits on /compact instead.
import { NO_REPLY, rpcError, say, serve, update } from "./lib.mjs";

const hang = process.argv.includes("hang");
const die = process.argv.includes("die");
let current = "m-fast";
let setRequests = 0;

const configOptions = () => [
  {
    type: "select",
    id: "mode",
    name: "Mode",
    category: "mode",
    currentValue: "ask",
    options: [{ value: "ask", name: "Ask" }],
  },
  { type: "boolean", id: "turbo", name: "Turbo", category: "model", currentValue: false },
  {
    type: "select",
    id: "llm",
    name: "Model",
    category: "model",
    currentValue: current,
    options: [
      { group: "fast", name: "Fast", options: [{ value: "m-fast", name: "Fast one", description: "quick" }] },
      { group: "deep", name: "Deep", options: [{ value: "m-deep", name: "Deep one" }] },
    ],
  },
];

serve({
  "session/new": async () => {
    setTimeout(
      () =>
        update("fake-session", {
          sessionUpdate: "available_commands_update",
          availableCommands: [
            { name: "help", description: "Help" },
            { name: "compact", description: "Compact" },
          ],
        }),
      20,
    );
    return { sessionId: "fake-session", configOptions: configOptions() };
  },
  "session/set_config_option": async () => {
    setRequests += 1;
    if (hang) return NO_REPLY;
    return rpcError(-32603, `model switch failed:\n${"backend unavailable ".repeat(40)}`);
  },
  "session/prompt": async ({ sessionId, prompt }) => {
    const text = prompt.map((b) => b.text ?? "").join("");
    if (text.startsWith("/compact") && die) process.exit(3);
    if (text.startsWith("/compact")) return rpcError(-32603, "compaction backend down");
    if (text.includes("switch")) {
      current = "m-deep";
      update(sessionId, { sessionUpdate: "config_option_update", configOptions: configOptions() });
    }
    say(sessionId, `answer (set_config_option requests so far: ${setRequests})`);
    return { stopReason: "end_turn" };
  },
});
