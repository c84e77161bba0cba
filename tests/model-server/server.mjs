// A small OpenAI-compatible server for the model tier's tests and bench:
// POST /v1/chat/completions with response_format json_schema, answered by
// llama.cpp (node-llama-cpp's prebuilt CPU binaries) with the schema as a
// grammar, greedy (temperature 0); usage.prompt_tokens counted with the
// model's own tokenizer. Loopback only; one request at a time; exits when its stdin closes (the
// test that started it is gone).
// Usage: node server.mjs MODEL.gguf PORT_FILE   (writes its port there once ready)
import http from "node:http";
import fs from "node:fs";
import {getLlama, GemmaChatWrapper, LlamaChatSession} from "node-llama-cpp";

const MAX_BODY = 1 << 20;
const [modelPath, portFile] = process.argv.slice(2);
if (!modelPath || !portFile) {
  console.error("usage: node server.mjs MODEL.gguf PORT_FILE");
  process.exit(2);
}
process.stdin.on("end", () => process.exit(0));
process.stdin.on("error", () => process.exit(0));
process.stdin.resume();

const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
const model = await llama.loadModel({modelPath});
const context = await model.createContext({contextSize: 4096, threads: 2});
const sequence = context.getSequence();
let queue = Promise.resolve();

async function complete(body) {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const system = messages.find((m) => m.role === "system")?.content || "";
  const user = messages.filter((m) => m.role === "user").map((m) => m.content).join("\n");
  const schema = body.response_format?.json_schema?.schema;
  const grammar = schema ? await llama.createGrammarForJsonSchema(schema) : undefined;
  await sequence.clearHistory();
  // The test model's GGUF carries no chat template: use its family's turn
  // format (what `llama-server --chat-template gemma` would), not a generic one.
  const session = new LlamaChatSession({
    contextSequence: sequence,
    chatWrapper: new GemmaChatWrapper(),
    systemPrompt: system,
    autoDisposeSequence: false,
  });
  try {
    const maxTokens = Math.min(Number(body.max_tokens) || 64, 256);
    const text = await session.prompt(user, {grammar, maxTokens, temperature: 0});
    // For a failing test's message: what the model read and answered.
    console.error(`--- prompt\n${user}\n--- answer ${text.replace(/\s+/g, "")}`);
    return {text, promptTokens: model.tokenize(system + "\n" + user).length};
  } finally {
    session.dispose({disposeSequence: false});
  }
}

function reply(res, status, value) {
  res.writeHead(status, {"content-type": "application/json"});
  res.end(JSON.stringify(value));
}

const server = http.createServer((req, res) => {
  if (req.method !== "POST" || !req.url.endsWith("/chat/completions")) {
    reply(res, 404, {error: "not found"});
    return;
  }
  let raw = "";
  let tooLong = false;
  req.on("data", (c) => {
    raw += c;
    if (raw.length > MAX_BODY) {
      tooLong = true;
      req.destroy();
    }
  });
  req.on("end", () => {
    if (tooLong) return;
    let body;
    try {
      body = JSON.parse(raw);
    } catch {
      reply(res, 400, {error: "the body is not JSON"});
      return;
    }
    queue = queue.then(async () => {
      try {
        const {text, promptTokens} = await complete(body);
        reply(res, 200, {
          choices: [{message: {role: "assistant", content: text}, finish_reason: "stop"}],
          usage: {prompt_tokens: promptTokens},
          model: body.model,
        });
      } catch (e) {
        reply(res, 500, {error: String(e)});
      }
    });
  });
});
server.listen(0, "127.0.0.1", () => fs.writeFileSync(portFile, String(server.address().port)));
