/**
 * The web chat page: one HTML document, no build step. Bubble HTML arrives already rendered and
 * sanitized by the server; everything the page itself writes (labels, status lines) goes through
 * textContent. The script runs under a per-response nonce, so injected markup could not run script.
 */
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
  textarea { flex: 1; resize: none; font: inherit; padding: 8px; border-radius: 8px; border: 1px solid var(--line); background: var(--bot); color: var(--fg); }
  form button { padding: 0 18px; border-radius: 8px; border: 0; background: #2563eb; color: #fff; font: inherit; cursor: pointer; }
  #conn { font-size: 12px; }
</style>
</head>
<body>
<header><b>parley</b><span>web chat</span><span id="conn" data-testid="connection">connecting…</span></header>
<main id="log" data-testid="log" aria-live="polite"></main>
<form id="composer"><textarea id="input" data-testid="input" rows="2" placeholder="Message the agent (/help for commands)"></textarea><button type="submit" data-testid="send">Send</button></form>
<script nonce="${nonce}">
(() => {
  const params = new URLSearchParams(location.search);
  const token = params.get("token") || "";
  let conversation = params.get("c") || localStorage.getItem("parley.conversation");
  if (!conversation || !/^[A-Za-z0-9_-]{1,64}$/.test(conversation)) {
    conversation = Array.from(crypto.getRandomValues(new Uint8Array(12)), (b) => b.toString(16).padStart(2, "0")).join("");
  }
  localStorage.setItem("parley.conversation", conversation);
  const log = document.getElementById("log");
  const conn = document.getElementById("conn");
  const nodes = new Map();
  let ws = null;
  let backoff = 250;

  function send(frame) {
    if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(frame));
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
      x.addEventListener("click", () => send({ type: "chip", text: chip }));
      actions.appendChild(x);
    }
    if (actions.childElementCount) parts.push(actions);
    el.replaceChildren(...parts);
    log.scrollTop = log.scrollHeight;
  }

  function connect() {
    const scheme = location.protocol === "https:" ? "wss" : "ws";
    ws = new WebSocket(scheme + "://" + location.host + "/ws?token=" + encodeURIComponent(token) + "&c=" + encodeURIComponent(conversation));
    ws.onopen = () => { conn.textContent = "connected"; backoff = 250; };
    ws.onmessage = (ev) => {
      const frame = JSON.parse(ev.data);
      if (frame.type === "snapshot") { log.replaceChildren(); nodes.clear(); frame.bubbles.forEach(render); }
      else if (frame.type === "upsert") render(frame.bubble);
      else if (frame.type === "error") render({ id: "err-" + Date.now(), role: "system", html: "", status: frame.message, final: true });
    };
    ws.onclose = () => {
      conn.textContent = "reconnecting…";
      setTimeout(connect, backoff);
      backoff = Math.min(backoff * 2, 5000);
    };
  }

  const input = document.getElementById("input");
  document.getElementById("composer").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const text = input.value.trim();
    if (!text) return;
    send({ type: "message", text });
    input.value = "";
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
