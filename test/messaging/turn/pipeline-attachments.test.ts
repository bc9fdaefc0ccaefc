/**
 * runTurnPipeline with attachments: the files are ingested inside the turn's frame and handed to the agent
 * as content blocks (image only when the agent declared it, else a file:// resource_link, plus the
 * decoded text of a text file), refusals are told to the user and named to the agent, a message of
 * refused files only runs no turn, and the temp files are gone when runTurnPipeline returns, also when the
 * agent throws. Without attachments the prompt is the plain text, as before.
 */
import { existsSync } from "node:fs";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MemoryLogger } from "../../../src/messaging/base/logger.js";
import { type Attachment, bytesAttachment } from "../../../src/messaging/files/ingest.js";
import { refusalLines } from "../../../src/messaging/files/prompt-blocks.js";
import { MemoryAuditSink } from "../../../src/messaging/security/audit.js";
import { SessionManager } from "../../../src/messaging/session/session-manager.js";
import type {
  PipelineProvider,
  TurnPipelineDeps,
  TurnRequest,
  TurnStore,
} from "../../../src/messaging/turn/pipeline.js";
import { NOTHING_READABLE, runTurnPipeline } from "../../../src/messaging/turn/pipeline.js";
import type { PromptContent } from "../../../src/messaging/turn/provider-events.js";
import { RecordingRenderer } from "../../../src/messaging/turn/recording-renderer.js";
import type { ScriptStep } from "../../../src/providers/scripted.js";
import { ScriptedProvider } from "../../../src/providers/scripted.js";
import { ManualClock, settle } from "../../helpers/manual-clock.js";

const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
);
const BINARY = Uint8Array.from([0x00, 0x01, 0x02, 0xfe, 0xff, 0x00, 0x13, 0x37]);
const KEY = "discord:default:dm:1";
const answer: ScriptStep[] = [
  { type: "text", text: "ok" },
  { type: "complete", stopReason: "end_turn" },
];

let tmpRoot: string;
beforeEach(async () => {
  tmpRoot = await mkdtemp(path.join(tmpdir(), "parley-drive-ingest-"));
});
afterEach(async () => {
  await rm(tmpRoot, { recursive: true, force: true });
});

function setup(o: { steps?: ScriptStep[][]; image?: boolean; store?: TurnStore } = {}) {
  const provider = new ScriptedProvider(o.steps ?? [answer]);
  if (o.image) provider.promptCapabilities = { image: true };
  let created = 0;
  const sessions = new SessionManager<PipelineProvider>({
    createProvider: () => {
      created += 1;
      return provider;
    },
  });
  const logger = new MemoryLogger();
  const deps: TurnPipelineDeps = {
    sessions,
    audit: new MemoryAuditSink(),
    logger,
    clock: new ManualClock(),
    ingestTmpRoot: tmpRoot,
    ...(o.store ? { store: o.store } : {}),
  };
  const notices: string[] = [];
  let released = 0;
  const renderer = new RecordingRenderer();
  const turn = (extra: Partial<TurnRequest>): TurnRequest => ({
    sessionKey: KEY,
    channelType: "discord",
    text: "",
    renderer,
    release: () => {
      released += 1;
    },
    notify: async (line) => {
      notices.push(line);
    },
    ...extra,
  });
  return {
    provider,
    deps,
    notices,
    renderer,
    turn,
    logger,
    released: () => released,
    created: () => created,
  };
}

const links = (prompt: string | PromptContent[] | undefined) =>
  (Array.isArray(prompt) ? prompt : []).filter((b) => b.type === "resource_link");

describe("runTurnPipeline: attachments", () => {
  it("without attachments the prompt is the plain text, unchanged", async () => {
    const s = setup();
    const result = await runTurnPipeline(s.deps, s.turn({ text: "hello" }));
    expect(s.provider.prompts).toEqual(["hello"]);
    expect(result.ok).toBe(true);
    expect(await readdir(tmpRoot)).toEqual([]);
  });

  it("an image goes as an image block with the exact bytes when the agent declared image support", async () => {
    const s = setup({ image: true });
    const result = await runTurnPipeline(
      s.deps,
      s.turn({ text: "what is this?", attachments: [bytesAttachment("photo.png", PNG, "image/png")] }),
    );
    expect(result.ok).toBe(true);
    const prompt = s.provider.prompts[0] as PromptContent[];
    expect(prompt).toEqual([
      { type: "text", text: "what is this?" },
      { type: "image", mimeType: "image/png", data: PNG.toString("base64") },
    ]);
    expect(await readdir(tmpRoot)).toEqual([]);
  });

  it("without image support the image is a file:// link, alive during the turn and gone after", async () => {
    const s = setup();
    await runTurnPipeline(s.deps, s.turn({ text: "look", attachments: [bytesAttachment("photo.png", PNG)] }));
    const [link] = links(s.provider.prompts[0]);
    expect(link).toMatchObject({ type: "resource_link", name: "photo.png", mimeType: "image/png" });
    expect(s.provider.linkedFiles[0]?.get("photo.png")).toEqual(PNG);
    const file = fileURLToPath((link as { uri: string }).uri);
    expect(path.dirname(path.dirname(file))).toBe(tmpRoot);
    expect(existsSync(file)).toBe(false);
    expect(await readdir(tmpRoot)).toEqual([]);
  });

  it("a text file is linked AND its decoded text injected; the message's own text comes first", async () => {
    const s = setup();
    const notes = Buffer.from("line one\nline two ✓\n", "utf8");
    await runTurnPipeline(
      s.deps,
      s.turn({ text: "summarize", attachments: [bytesAttachment("notes.md", notes)] }),
    );
    const prompt = s.provider.prompts[0] as PromptContent[];
    expect(prompt[0]).toEqual({ type: "text", text: "summarize" });
    expect(prompt[1]).toMatchObject({ type: "resource_link", name: "notes.md", mimeType: "text/plain" });
    expect(prompt[2]).toEqual({
      type: "text",
      text: "Contents of the attached file notes.md:\nline one\nline two ✓\n",
    });
    expect(s.provider.linkedFiles[0]?.get("notes.md")).toEqual(notes);
  });

  it("a refused file is told to the user (one line) and named to the agent; the rest still runs", async () => {
    const s = setup({ image: true });
    await runTurnPipeline(
      s.deps,
      s.turn({
        text: "two files",
        attachments: [bytesAttachment("blob.bin", BINARY), bytesAttachment("ok.png", PNG)],
      }),
    );
    expect(s.notices).toEqual(["⚠️ Could not read blob.bin: the file type is not one this agent can read."]);
    const prompt = s.provider.prompts[0] as PromptContent[];
    expect(prompt.map((b) => b.type)).toEqual(["text", "image", "text"]);
    expect(prompt[2]).toEqual({
      type: "text",
      text: "The user attached files that could not be read (you have not seen them):\n- blob.bin: the file type is not one this agent can read",
    });
  });

  it("only attachments, all refused: the user is told and no turn runs", async () => {
    const s = setup();
    const result = await runTurnPipeline(
      s.deps,
      s.turn({
        text: "  ",
        attachments: [bytesAttachment("a.bin", BINARY), bytesAttachment("empty.txt", new Uint8Array())],
      }),
    );
    expect(s.provider.prompts).toEqual([]);
    expect(result.stopReason).toBe(NOTHING_READABLE);
    expect(result.ok).toBe(true);
    expect(s.notices).toEqual([
      "⚠️ Could not read a.bin: the file type is not one this agent can read.\n⚠️ Could not read empty.txt: the file is empty.",
    ]);
    expect(s.renderer.calls).toEqual([{ call: "close" }]);
    expect(s.released()).toBe(1);
    expect(await readdir(tmpRoot)).toEqual([]);
  });

  it("the per-turn ingest limits apply: an oversize file is refused on bytes read", async () => {
    const s = setup();
    await runTurnPipeline(
      s.deps,
      s.turn({
        text: "big",
        attachments: [bytesAttachment("big.png", Buffer.concat([PNG, Buffer.alloc(4096)]))],
        ingestLimits: { maxImageBytes: 1024 },
      }),
    );
    expect(s.notices).toEqual(["⚠️ Could not read big.png: the image is larger than the 1 KiB limit."]);
    expect(links(s.provider.prompts[0])).toEqual([]);
  });

  it("the temp files are gone when the agent throws, and the agent is replaced", async () => {
    const s = setup({ steps: [[{ throws: "agent crashed" }]] });
    const result = await runTurnPipeline(
      s.deps,
      s.turn({ text: "x", attachments: [bytesAttachment("photo.png", PNG)] }),
    );
    expect(result.ok).toBe(false);
    const file = fileURLToPath((links(s.provider.prompts[0])[0] as { uri: string }).uri);
    expect(s.provider.linkedFiles[0]?.get("photo.png")).toEqual(PNG);
    expect(existsSync(file)).toBe(false);
    expect(await readdir(tmpRoot)).toEqual([]);
    await expect.poll(() => s.provider.closed).toBe(true);
  });

  it("an ingest that cannot even start fails the turn without replacing the agent", async () => {
    const s = setup();
    s.deps.ingestTmpRoot = path.join(tmpRoot, "does-not-exist");
    const result = await runTurnPipeline(
      s.deps,
      s.turn({ text: "x", attachments: [bytesAttachment("a.png", PNG)] }),
    );
    expect(result.ok).toBe(false);
    expect(s.provider.prompts).toEqual([]);
    // The driver never ran, so the pipeline ends the turn on screen itself, with the reason.
    expect(s.renderer.calls).toEqual([
      { call: "onDone", stopReason: "error", error: expect.stringMatching(/^ENOENT: .*mkdtemp/) },
      { call: "close" },
    ]);
    // A replacement would be under way by now (hardStop closes the provider after one await).
    await settle();
    expect(s.provider.closed).toBe(false);
    expect(s.released()).toBe(1);
  });

  it("a source that fails mid-read is a visible refusal, not a failed turn", async () => {
    const s = setup();
    const flaky: Attachment = {
      name: "flaky.png",
      async *read() {
        yield PNG.subarray(0, 8);
        throw new Error("connection reset");
      },
    };
    const result = await runTurnPipeline(s.deps, s.turn({ text: "x", attachments: [flaky] }));
    expect(result.ok).toBe(true);
    expect(s.notices).toEqual([
      "⚠️ Could not read flaky.png: the file could not be fetched (connection reset).",
    ]);
  });

  it("a muted origin gets no refusal line (like the answer), the agent is still told", async () => {
    const store = {
      isMuted: () => true,
      setOriginLink: () => {},
    } as unknown as TurnStore;
    const s = setup({ store });
    await runTurnPipeline(s.deps, s.turn({ text: "x", attachments: [bytesAttachment("a.bin", BINARY)] }));
    expect(s.notices).toEqual([]);
    const prompt = s.provider.prompts[0] as PromptContent[];
    expect(prompt.at(-1)).toMatchObject({ type: "text", text: expect.stringContaining("a.bin") });
  });

  it("refusal lines keep a hostile name to one bounded line", () => {
    const line = refusalLines([
      { index: 0, name: `evil\nname${"x".repeat(200)}`, reason: "empty", message: "the file is empty" },
    ]);
    expect(line.split("\n")).toHaveLength(1);
    expect(line).toMatch(/^⚠️ Could not read evil namex+…: the file is empty\.$/);
    expect(Array.from(line).length).toBeLessThan(130);
  });
});
