/**
 * The web chat page: one HTML document, no build step. Bubble HTML arrives already rendered and
 * sanitized by the server; everything the page itself writes (labels, status lines, file names) goes
 * through textContent. The script runs under a per-response nonce, so injected markup could not run
 * script; every handler is attached from that script (the CSP allows no inline handler).
 * Files (the attach button or a drop on the composer) wait as chips and go, base64, inside the next
 * message frame; the page checks the protocol's limits first, since a frame over them is refused.
 */
import { MAX_UPLOAD_BYTES, MAX_UPLOAD_FILES } from "./protocol.js";

export function renderPage(nonce: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>parley</title>
<style>
  :root { color-scheme: light dark; --bg: #f6f7f9; --fg: #1b1f24; --me: #dbeafe; --bot: #ffffff; --muted: #6b7280; --line: #e5e7eb; }
  @media (prefers-color-scheme: dark) { :root { --bg: #0f1115; --fg: #e6e6e6; --me: #1e3a5f; --bot: #181b21; --muted: #9ca3af; --line: #2a2f37; } }
  * { box-sizing: border-box; }
  body { margin: 0; font: 15px/1.5 system-ui, sans-serif; background: var(--bg); color: var(--fg); display: flex; flex-direction: column; height: 100vh; }
  header { padding: 10px 16px; border-bottom: 1px solid var(--line); display: flex; gap: 12px; align-items: baseline; }
  header b { font-size: 17px; } header span { color: var(--muted); font-size: 13px; }
  #log { flex: 1; overflow-y: auto; padding: 16px; display: flex; flex-direction: column; gap: 10px; }
  .bubble { max-width: min(820px, 92%); padding: 8px 12px; border-radius: 10px; background: var(--bot); border: 1px solid var(--line); overflow-wrap: anywhere; }
  .bubble.user { align-self: flex-end; background: var(--me); }
  .bubble.system, .bubble.receipt { align-self: center; background: transparent; border-style: dashed; color: var(--muted); font-size: 13px; }
  .bubble.approval { border-color: #d97706; }
  .bubble p { margin: 4px 0; }
  .bubble pre { background: rgba(127,127,127,.12); padding: 8px; border-radius: 6px; overflow-x: auto; }
  .bubble code { font: 13px ui-monospace, monospace; }
  .bubble table { border-collapse: collapse; margin: 6px 0; }
  .bubble th, .bubble td { border: 1px solid var(--line); padding: 3px 8px; }
  .status { color: var(--muted); font-size: 12px; margin-top: 4px; }
  .actions { display: flex; flex-wrap: wrap; gap: 6px; margin-top: 6px; }
  .actions button { border: 1px solid var(--line); background: var(--bg); color: var(--fg); border-radius: 14px; padding: 3px 12px; cursor: pointer; }
  .actions button.approve { border-color: #16a34a; } .actions button.deny { border-color: #dc2626; }
  form { display: flex; gap: 8px; padding: 12px 16px; border-top: 1px solid var(--line); }
  form.dragging { outline: 2px dashed #2563eb; outline-offset: -4px; }
  #pending { display: flex; flex-wrap: wrap; gap: 6px; padding: 8px 16px 0; border-top: 1px solid var(--line); }
  #pending[hidden] { display: none; }
  .file { display: inline-flex; align-items: center; gap: 4px; border: 1px solid var(--line); border-radius: 12px; padding: 1px 8px; font-size: 13px; background: var(--bg); color: var(--fg); }
  .file button { border: 0; background: transparent; color: var(--muted); cursor: pointer; font: inherit; padding: 0 2px; }
  .bubble .files { display: flex; flex-wrap: wrap; gap: 4px; margin-top: 4px; }
  #attach { padding: 0 12px; background: var(--bot); color: var(--fg); border: 1px solid var(--line); }
  textarea { flex: 1; resize: none; font: inherit; padding: 8px; border-radius: 8px; border: 1px solid var(--line); background: var(--bot); color: var(--fg); }
  form button { padding: 0 18px; border-radius: 8px; border: 0; background: #2563eb; color: #fff; font: inherit; cursor: pointer; }
  #conn { font-size: 12px; }
</style>
</head>
<body>
<header><b>parley</b><span id="title" data-testid="title">web chat</span><span id="conn" data-testid="connection">connecting…</span></header>
<main id="log" data-testid="log" aria-live="polite"></main>
<div id="pending" data-testid="pending-files" hidden></div>
<form id="composer"><input type="file" id="file-input" data-testid="file-input" multiple hidden><button type="button" id="attach" data-testid="attach" title="Attach files (or drop them here)" aria-label="Attach files">📎</button><textarea id="input" data-testid="input" rows="2" placeholder="Message the agent (/help for commands)"></textarea><button type="submit" data-testid="send">Send</button></form>
<script nonce="${nonce}">
(() => {
  const params = new URLSearchParams(location.search);
  // The token authenticated this load; the server gave the page a cookie for the rest, so the token
  // leaves the address bar (and the history, and what a screenshot or a shoulder shows).
  if (params.has("token")) history.replaceState(null, "", location.pathname + (params.get("c") ? "?c=" + encodeURIComponent(params.get("c")) : ""));
  let conversation = params.get("c") || localStorage.getItem("parley.conversation");
  if (!conversation || !/^[A-Za-z0-9_-]{1,64}$/.test(conversation)) {
    conversation = Array.from(crypto.getRandomValues(new Uint8Array(12)), (b) => b.toString(16).padStart(2, "0")).join("");
  }
  localStorage.setItem("parley.conversation", conversation);
  const log = document.getElementById("log");
  const conn = document.getElementById("conn");
  const nodes = new Map();
  const MAX_FILES = ${MAX_UPLOAD_FILES};
  const MAX_BYTES = ${MAX_UPLOAD_BYTES};
  let ws = null;
  let backoff = 250;
  let errors = 0;

  /** True when the frame went out on an open socket. */
  function send(frame) {
    if (!ws || ws.readyState !== WebSocket.OPEN) return false;
    ws.send(JSON.stringify(frame));
    return true;
  }

  // Sent messages the server has not yet said it journaled: sent again after a reconnect (the
  // server drops a copy it already has), so a message is never lost to a dropped connection.
  const outbox = new Map();
  function sendMessage(frame) {
    frame.id = Array.from(crypto.getRandomValues(new Uint8Array(12)), (b) => b.toString(16).padStart(2, "0")).join("");
    if (!send(frame)) return false;
    outbox.set(frame.id, frame);
    return true;
  }

  function showError(message) {
    render({ id: "err-" + ++errors, role: "system", html: "", status: message, final: true });
  }

  function size(n) {
    return n >= 1048576 ? (n / 1048576).toFixed(1) + " MiB" : Math.max(1, Math.ceil(n / 1024)) + " KiB";
  }

  function render(b) {
    let el = nodes.get(b.id);
    if (!el) {
      el = document.createElement("div");
      el.dataset.id = b.id;
      nodes.set(b.id, el);
      log.appendChild(el);
    }
    el.className = "bubble " + b.role;
    el.dataset.role = b.role;
    el.dataset.final = String(b.final);
    el.dataset.testid = "bubble";
    el.setAttribute("data-testid", "bubble-" + b.role);
    const body = document.createElement("div");
    body.className = "body";
    body.innerHTML = b.html; // sanitized server-side: markdown-it with raw HTML disabled
    const parts = [body];
    if (b.files && b.files.length) {
      const files = document.createElement("div");
      files.className = "files";
      for (const name of b.files) {
        const f = document.createElement("span");
        f.className = "file";
        f.setAttribute("data-testid", "bubble-file");
        f.textContent = "📎 " + name;
        files.appendChild(f);
      }
      parts.push(files);
    }
    if (b.status) {
      const s = document.createElement("div");
      s.className = "status";
      s.setAttribute("data-testid", "status");
      s.textContent = b.status;
      parts.push(s);
    }
    const actions = document.createElement("div");
    actions.className = "actions";
    for (const btn of b.buttons || []) {
      const x = document.createElement("button");
      x.type = "button";
      x.textContent = btn.label;
      x.className = btn.verdict === "deny" ? "deny" : "approve";
      x.setAttribute("data-testid", "approval-button");
      x.addEventListener("click", () => send({ type: "press", requestId: btn.requestId, nonce: btn.nonce, verdict: btn.verdict }));
      actions.appendChild(x);
    }
    for (const chip of b.chips || []) {
      const x = document.createElement("button");
      x.type = "button";
      x.textContent = chip;
      x.setAttribute("data-testid", "chip");
      x.addEventListener("click", () => sendMessage({ type: "chip", text: chip }));
      actions.appendChild(x);
    }
    if (actions.childElementCount) parts.push(actions);
    el.replaceChildren(...parts);
    log.scrollTop = log.scrollHeight;
  }

  // The conversation's name (auto-title or /title), as text: never markup.
  function showTitle(title) {
    document.getElementById("title").textContent = title;
    document.title = title + " · parley";
  }

  function connect() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    ws = new WebSocket(scheme + "://" + location.host + "/ws?c=" + encodeURIComponent(conversation));
    ws.onopen = () => {
      conn.textContent = "connected";
      backoff = 250;
      for (const frame of outbox.values()) send(frame);
    };
    ws.onmessage = (ev) => {
      const frame = JSON.parse(ev.data);
      if (frame.type === "snapshot") {
        log.replaceChildren(); nodes.clear(); frame.bubbles.forEach(render);
        if (frame.title) showTitle(frame.title);
      }
      else if (frame.type === "upsert") render(frame.bubble);
      else if (frame.type === "title") showTitle(frame.title);
      else if (frame.type === "accepted") outbox.delete(frame.id);
      else if (frame.type === "error") showError(frame.message);
    };
    ws.onclose = (ev) => {
      // 1009: the server refused a frame over its size bound and closed the socket.
      if (ev.code === 1009) showError("That message was too large to send: files may total at most " + size(MAX_BYTES) + ".");
      conn.textContent = "reconnecting…";
      setTimeout(connect, backoff);
      backoff = Math.min(backoff * 2, 5000);
    };
  }

  const input = document.getElementById("input");
  const composer = document.getElementById("composer");
  const fileInput = document.getElementById("file-input");
  const pendingEl = document.getElementById("pending");
  let pending = [];
  let sending = false;

  function renderPending() {
    const chips = pending.map((file, i) => {
      const chip = document.createElement("span");
      chip.className = "file";
      chip.setAttribute("data-testid", "pending-file");
      const label = document.createElement("span");
      label.textContent = "📎 " + file.name + " (" + size(file.size) + ")";
      const remove = document.createElement("button");
      remove.type = "button";
      remove.textContent = "×";
      remove.setAttribute("aria-label", "Remove " + file.name);
      remove.setAttribute("data-testid", "remove-file");
      remove.addEventListener("click", () => { pending.splice(i, 1); renderPending(); });
      chip.append(label, remove);
      return chip;
    });
    pendingEl.replaceChildren(...chips);
    pendingEl.hidden = pending.length === 0;
  }

  /** Checked here against the protocol's limits: a frame over them would be refused whole. */
  function addFiles(list) {
    for (const file of Array.from(list || [])) {
      const total = pending.reduce((n, f) => n + f.size, 0);
      if (pending.length >= MAX_FILES) { showError("Not attached: " + file.name + ": at most " + MAX_FILES + " files per message."); continue; }
      if (total + file.size > MAX_BYTES) { showError("Not attached: " + file.name + ": the files of one message may total at most " + size(MAX_BYTES) + "."); continue; }
      pending.push(file);
    }
    renderPending();
  }

  function readFile(file) {
    return new Promise((resolve, reject) => {
      const reader = new FileReader();
      reader.onload = () => {
        const url = String(reader.result);
        const at = url.indexOf(";base64,");
        resolve({ name: file.name, mime: file.type || "", data: at < 0 ? "" : url.slice(at + 8) });
      };
      reader.onerror = () => reject(reader.error);
      reader.readAsDataURL(file);
    });
  }

  document.getElementById("attach").addEventListener("click", () => fileInput.click());
  fileInput.addEventListener("change", () => { addFiles(fileInput.files); fileInput.value = ""; });
  const carriesFiles = (ev) => !!ev.dataTransfer && Array.from(ev.dataTransfer.types).includes("Files");
  composer.addEventListener("dragover", (ev) => { if (carriesFiles(ev)) { ev.preventDefault(); composer.classList.add("dragging"); } });
  composer.addEventListener("dragleave", () => composer.classList.remove("dragging"));
  composer.addEventListener("drop", (ev) => {
    ev.preventDefault();
    composer.classList.remove("dragging");
    addFiles(ev.dataTransfer && ev.dataTransfer.files);
  });
  // A file dropped beside the composer must not navigate away from the chat.
  window.addEventListener("dragover", (ev) => { if (carriesFiles(ev)) ev.preventDefault(); });
  window.addEventListener("drop", (ev) => { if (carriesFiles(ev)) ev.preventDefault(); });

  composer.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    if (sending) return;
    const text = input.value.trim();
    if (!text && pending.length === 0) return;
    if (!ws || ws.readyState !== WebSocket.OPEN) { showError("Not connected: the message was not sent."); return; }
    sending = true;
    try {
      const frame = { type: "message", text };
      const files = pending.slice();
      if (files.length) frame.files = await Promise.all(files.map(readFile));
      if (!sendMessage(frame)) { showError("Not connected: the message was not sent."); return; }
      input.value = "";
      pending = pending.filter((f) => !files.includes(f));
      renderPending();
    } catch (error) {
      showError("Could not read a file: " + (error && error.message ? error.message : String(error)));
    } finally {
      sending = false;
    }
  });
  input.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && !ev.shiftKey) { ev.preventDefault(); document.getElementById("composer").requestSubmit(); }
  });
  connect();
})();
</script>
</body>
</html>
`;
}
