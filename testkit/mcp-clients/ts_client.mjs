// The TypeScript MCP SDK's client (the one Claude Desktop, Claude Code, Cursor, VS Code and
// the MCP Inspector are built on) driven by a plan, for LoCAL2's tests.
//
//   node ts_client.mjs '<plan JSON>'
//
// plan: {"stdio": {"command", "args", "env"}} or {"http": {"url", "headers"}}, and "steps":
// [{"op": "listTools"}, {"op": "callTool", "name", "arguments"}, {"op": "getPrompt", "name",
// "arguments"}, {"op": "listResources", "cursor"?}, {"op": "readListed"} (every resource the
// last listResources gave), {"op": "readResource", "uri"}], {"op": "waitResourcesChanged",
// "signal", "timeoutMs"} (writes the file "signal", then waits for a
// notifications/resources/list_changed since the last listResources: {"told": n} of them so
// far, or an error on timeout), {"op": "subscribe", "uri"}, {"op": "unsubscribe", "uri"},
// {"op": "followUpdates", "uri", "whileText", "timeoutMs"} (on each
// notifications/resources/updated for "uri", reads it again, until its text no longer has
// "whileText": {"updates": n, "texts": [...]}, or an error on timeout).
// A string argument or URI "$run_id" or "$resource" is the one the last tool result gave.
// Prints one JSON object: {"connected": true, "capabilities", "steps": [{"ok": result} |
// {"error": {code, message, data}}]} or {"connected": false, "error": message}.
import { writeFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const plan = JSON.parse(process.argv[2]);

function transportOf(plan) {
  if (plan.stdio) {
    const { command, args, env } = plan.stdio;
    return new StdioClientTransport({ command, args, env, stderr: "inherit" });
  }
  const { url, headers } = plan.http;
  return new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
}

function said(error) {
  return { code: error.code ?? null, message: String(error.message), data: error.data ?? null };
}

function given(value, state) {
  return typeof value === "string" && value.startsWith("$") ? state.given[value.slice(1)] : value;
}

function withGiven(args, state) {
  return Object.fromEntries(Object.entries(args ?? {}).map(([k, v]) => [k, given(v, state)]));
}

async function waitUntil(done, deadline, what) {
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`no ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function followUpdates(client, s, state) {
  const uri = given(s.uri, state);
  const deadline = Date.now() + (s.timeoutMs ?? 60000);
  const texts = [];
  let seen = 0;
  for (;;) {
    await waitUntil(() => (state.updated[uri] ?? 0) > seen, deadline, `update of ${uri}`);
    seen = state.updated[uri];
    const read = await client.readResource({ uri });
    const text = read.contents.map((c) => c.text ?? "").join("\n");
    texts.push(text);
    if (!text.includes(s.whileText)) return { updates: seen, texts };
  }
}

async function step(client, s, state) {
  switch (s.op) {
    case "listTools":
      return client.listTools();
    case "callTool": {
      const result = await client.callTool({
        name: s.name,
        arguments: withGiven(s.arguments, state),
      });
      for (const key of ["run_id", "resource"]) {
        if (result.structuredContent?.[key]) state.given[key] = result.structuredContent[key];
      }
      return result;
    }
    case "subscribe":
      return client.subscribeResource({ uri: given(s.uri, state) });
    case "unsubscribe":
      return client.unsubscribeResource({ uri: given(s.uri, state) });
    case "followUpdates":
      return followUpdates(client, s, state);
    case "getPrompt":
      return client.getPrompt({ name: s.name, arguments: s.arguments ?? {} });
    case "listResources": {
      const listed = await client.listResources(s.cursor ? { cursor: s.cursor } : undefined);
      state.listed = listed.resources;
      state.toldAtList = state.told;
      return listed;
    }
    case "readListed": {
      const read = [];
      for (const resource of state.listed ?? []) {
        read.push(await client.readResource({ uri: resource.uri }));
      }
      return read;
    }
    case "readResource":
      return client.readResource({ uri: given(s.uri, state) });
    case "waitResourcesChanged": {
      if (s.signal) writeFileSync(s.signal, "waiting\n");
      const deadline = Date.now() + (s.timeoutMs ?? 60000);
      while (state.told <= state.toldAtList) {
        if (Date.now() > deadline) throw new Error("no notifications/resources/list_changed");
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      return { told: state.told };
    }
    default:
      throw new Error(`unknown step ${s.op}`);
  }
}

const client = new Client({ name: "local2-ts-test", version: "1.0.0" });
const out = { connected: false, steps: [] };
const state = { told: 0, toldAtList: 0, updated: {}, given: {} };
client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
  state.told += 1;
});
client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
  const { uri } = notification.params;
  state.updated[uri] = (state.updated[uri] ?? 0) + 1;
});
try {
  await client.connect(transportOf(plan));
  out.connected = true;
  out.server = client.getServerVersion();
  out.capabilities = client.getServerCapabilities();
  out.protocolVersion = client.transport?.protocolVersion ?? null;
  for (const s of plan.steps ?? []) {
    try {
      out.steps.push({ ok: await step(client, s, state) });
    } catch (error) {
      out.steps.push({ error: said(error) });
    }
  }
} catch (error) {
  out.error = String(error.message);
} finally {
  await client.close().catch(() => {});
}
process.stdout.write(JSON.stringify(out) + "\n");
