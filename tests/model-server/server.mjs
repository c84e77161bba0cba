// A small OpenAI-compatible server for the model tier's tests and bench:
// POST /v1/chat/completions with response_format json_schema, answered by
// llama.cpp (node-llama-cpp) with the schema as a grammar. Loopback only.
// Usage: node server.mjs MODEL.gguf PORT_FILE  (writes the port it listens on)
import http from "node:http";
import fs from "node:fs";
import {getLlama, LlamaChatSession} from "node-llama-cpp";

const [modelPath, portFile] = process.argv.slice(2);
if (!modelPath || !portFile) {
  console.error("usage: node server.mjs MODEL.gguf PORT_FILE");
  process.exit(2);
}
const llama = await getLlama({gpu: false, build: "never", logLevel: "error"});
const model = await llama.loadModel({modelPath});
const context = await model.createContext({contextSize: 4096, threads: 2});
const sequence = context.getSequence();
let queue = Promise.resolve();

async function complete(body) {
  const messages = body.messages || [];
  const system = messages.find((m) => m.role === "system")?.content || "";
  const user = messages.filter((m) => m.role === "user").map((m) => m.content).join("\n");
  const schema = body.response_format?.json_schema?.schema;
  const grammar = schema ? await llama.createGrammarForJsonSchema(schema) : undefined;
  sequence.clearHistory && (await sequence.clearHistory());
  const session = new LlamaChatSession({contextSequence: sequence, systemPrompt: system, autoDisposeSequence: false});
  const started = Date.now();
  const text = await session.prompt(user, {grammar, maxTokens: body.max_tokens || 64, temperature: 0});
  session.dispose({disposeSequence: false});
  const promptTokens = model.tokenize(system + "\n" + user).length;
  return {text, promptTokens, ms: Date.now() - started};
}

const server = http.createServer((req, res) => {
  if (req.method !== "POST" || !req.url.endsWith("/chat/completions")) {
    res.writeHead(404).end("not found");
    return;
  }
  let raw = "";
  req.on("data", (c) => (raw += c));
  req.on("end", () => {
    queue = queue.then(async () => {
      try {
        const body = JSON.parse(raw);
        const {text, promptTokens} = await complete(body);
        res.writeHead(200, {"content-type": "application/json"});
        res.end(JSON.stringify({
          choices: [{message: {role: "assistant", content: text}, finish_reason: "stop"}],
          usage: {prompt_tokens: promptTokens},
          model: body.model,
        }));
      } catch (e) {
        res.writeHead(500).end(String(e));
      }
    });
  });
});
server.listen(0, "127.0.0.1", () => fs.writeFileSync(portFile, String(server.address().port)));
