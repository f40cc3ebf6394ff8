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
// far, or an error on timeout).
// Prints one JSON object: {"connected": true, "capabilities", "steps": [{"ok": result} |
// {"error": {code, message, data}}]} or {"connected": false, "error": message}.
import { writeFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResourceListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

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

async function step(client, s, state) {
  switch (s.op) {
    case "listTools":
      return client.listTools();
    case "callTool":
      return client.callTool({ name: s.name, arguments: s.arguments ?? {} });
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
      return client.readResource({ uri: s.uri });
    case "waitResourcesChanged": {
      writeFileSync(s.signal, "waiting\n");
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
const state = { told: 0, toldAtList: 0 };
client.setNotificationHandler(ResourceListChangedNotificationSchema, () => {
  state.told += 1;
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
