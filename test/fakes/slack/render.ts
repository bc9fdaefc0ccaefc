/**
 * What a Slack user would see of a message, as the fake renders it: mrkdwn (posted text, section
 * and context blocks) with its entities decoded, links collapsed to their labels and paired
 * formatting markers removed; Markdown (streamed text) likewise; and the control sequences Slack
 * would act on (a broadcast, a user or channel mention, a link whose target hides behind a label).
 */

const decode = (text: string) => text.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");

/** Paired *bold*, _italic_, ~strike~ and `code` markers around words, as Slack hides them. */
function unpair(text: string, markers: RegExp): string {
  return text.replace(markers, (_m, lead: string, _mark: string, inner: string) => `${lead}${inner}`);
}

export function renderMrkdwn(text: string): string {
  const collapsed = text
    .replace(/<([^<>|\n]+)\|([^<>\n]*)>/g, (_m, _target, label: string) => label)
    .replace(/<!(channel|here|everyone)>/g, "@$1")
    .replace(/<([@#][A-Z0-9]+)>/g, "$1")
    .replace(/<((?:https?|mailto):[^<>\n]+)>/g, "$1");
  const plain = unpair(collapsed, /(^|[\s(>])([*_~`])(?=\S)([^\n]*?\S)\2(?=$|[\s).,!?:;<])/gm);
  return decode(plain.replace(/```/g, ""));
}

export function renderMarkdown(text: string): string {
  const linked = text.replace(/!?\[([^\]\n]*)\]\(([^()\s]*)\)/g, "$1");
  const bold = linked.replace(/\*\*(?=\S)([^\n]*?\S)\*\*/g, "$1").replace(/~~(?=\S)([^\n]*?\S)~~/g, "$1");
  return decode(unpair(bold, /(^|[\s(>])([*_`])(?=\S)([^\n]*?\S)\2(?=$|[\s).,!?:;<])/gm).replace(/```/g, ""));
}

/** Every control sequence in `raw` (a text as sent) that Slack would turn into a ping or a link. */
export function controlSequences(raw: string): string[] {
  const found: string[] = [];
  for (const m of raw.matchAll(/<!(channel|here|everyone)(\|[^>]*)?>/g)) found.push(m[0]);
  for (const m of raw.matchAll(/<[@#][UWCG][A-Z0-9]+(\|[^>]*)?>/g)) found.push(m[0]);
  for (const m of raw.matchAll(/<((?:https?|mailto):[^<>|\n]+)\|([^<>\n]+)>/g))
    if (m[1] !== m[2]) found.push(m[0]);
  return found;
}
