// Reading a turn streamed in the Vercel AI UI-message protocol (server-sent events).

import { Unreachable, errorOf, request } from "./util.js";

/**
 * Post the newest message and call onChunk for every chunk until the stream ends.
 * Aborting `signal` closes the connection: the server stops the run and keeps the answer
 * as far as it got. A refusal throws the server's error (util.errorOf); a server that
 * cannot be reached throws Unreachable, with `midway` set when the answer had begun.
 */
export async function streamTurn(chatId, text, onChunk, signal) {
  const body = {
    id: chatId,
    trigger: "submit-message",
    messages: [{ id: "u-" + Date.now(), role: "user", parts: [{ type: "text", text }] }],
  };
  const response = await request("/api/chat", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    signal,
  });
  if (!response.ok) throw await errorOf(response);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    let read;
    try {
      read = await reader.read();
    } catch (error) {
      if (error.name === "AbortError") throw error;
      const lost = new Unreachable(error);
      lost.midway = true;
      throw lost;
    }
    const { value, done } = read;
    if (done) break;
    buffer += value;
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const event = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      for (const line of event.split("\n")) {
        if (!line.startsWith("data: ")) continue;
        const data = line.slice(6);
        if (data === "[DONE]") return;
        onChunk(JSON.parse(data));
      }
    }
  }
}
