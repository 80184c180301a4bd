// Kenning's memory for OpenCode: hands OpenCode's plugin events to `kenning hook opencode <event>`
// (JSON on stdin, as every other agent's hooks) and gives the context it answers back to the model.
// Written by `kenning install --agent opencode`; `kenning uninstall` deletes this file.
// Every event waits for its hook (a few tens of milliseconds: it only spools the event), so events
// are recorded in the order they happened; SessionStart and the prompt wait at most TIMEOUT_MS for
// their context, and any failure means "no context", never a broken session.
import { spawn } from "node:child_process";

const PYTHON = "__KENNING_PYTHON__";
const ENTRY = "from kenning.hook.main import cli; cli()";
const EXTRA_ENV = __KENNING_ENV__;
const TIMEOUT_MS = 5000;
// `opencode run "…"` quotes each word of its message that holds a space before it becomes the prompt:
// the hook gets the process's arguments to undo exactly that (kenning/integrations/opencode.py, run_prompt).
const CLI_ARGS = Array.isArray(process.argv) ? process.argv.slice(2).filter((a) => typeof a === "string") : [];

function run(event, payload) {
  return new Promise((resolve) => {
    let child;
    try {
      child = spawn(PYTHON, ["-I", "-c", ENTRY, "opencode", event], {
        env: { ...process.env, ...EXTRA_ENV }, stdio: ["pipe", "pipe", "ignore"],
      });
    } catch {
      resolve(null);
      return;
    }
    let out = "";
    let done = false;
    const finish = (value) => { if (!done) { done = true; resolve(value); } };
    const timer = setTimeout(() => { try { child.kill(); } catch {} finish(null); }, TIMEOUT_MS);
    child.on("error", () => { clearTimeout(timer); finish(null); });
    child.stdout.on("data", (d) => { out += d; });
    child.on("close", () => {
      clearTimeout(timer);
      try { finish(out.trim() ? JSON.parse(out) : null); } catch { finish(null); }
    });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(payload));
  });
}

function contextOf(answer) {
  const text = answer && answer.hookSpecificOutput && answer.hookSpecificOutput.additionalContext;
  return typeof text === "string" && text ? text : null;
}

export const KenningMemory = async ({ directory, worktree }) => {
  const cwd = directory || worktree || process.cwd();
  const startContext = new Map();   // sessionID -> context text, given to every request's system prompt
  const started = new Map();        // sessionID -> Promise of the SessionStart answer
  const roles = new Map();          // messageID -> role
  const lastText = new Map();       // sessionID -> the assistant's latest text

  const base = (sessionID, event) => ({ session_id: sessionID, cwd, hook_event_name: event });
  const start = (sessionID) => {
    if (!started.has(sessionID)) {
      started.set(sessionID, run("SessionStart", { ...base(sessionID, "SessionStart"), source: "startup" })
        .then((answer) => { const text = contextOf(answer); if (text) startContext.set(sessionID, text); }));
    }
    return started.get(sessionID);
  };

  return {
    event: async ({ event }) => {
      const props = (event && event.properties) || {};
      if (event.type === "session.created" && props.info && props.info.id) {
        await start(props.info.id);
      } else if (event.type === "message.updated" && props.info) {
        roles.set(props.info.id, props.info.role);
      } else if (event.type === "message.part.updated" && props.part && props.part.type === "text") {
        if (roles.get(props.part.messageID) === "assistant" && props.part.text) {
          lastText.set(props.part.sessionID, props.part.text);
        }
      } else if (event.type === "session.idle" && props.sessionID) {
        await run("Stop", { ...base(props.sessionID, "Stop"), last_assistant_message: lastText.get(props.sessionID) || "" });
      } else if (event.type === "session.deleted" && props.info && props.info.id) {
        await run("SessionEnd", { ...base(props.info.id, "SessionEnd"), reason: "deleted" });
      }
    },
    "chat.message": async (input, output) => {
      const sessionID = input.sessionID;
      await start(sessionID);
      const prompt = (output.parts || []).filter((p) => p.type === "text" && !p.synthetic).map((p) => p.text).join("\n");
      if (!prompt) return;
      const answer = await run("UserPromptSubmit", { ...base(sessionID, "UserPromptSubmit"), prompt, cli_args: CLI_ARGS });
      const text = contextOf(answer);
      if (text && output.message) {
        output.parts.push({ id: `prt-kenning-${Date.now()}`, sessionID, messageID: output.message.id, type: "text", text, synthetic: true });
      }
    },
    "experimental.chat.system.transform": async (input, output) => {
      const text = input && input.sessionID ? startContext.get(input.sessionID) : null;
      if (text && Array.isArray(output.system)) output.system.push(text);
    },
    "tool.execute.after": async (input, output) => {
      const meta = (output && output.metadata) || {};
      await run("PostToolUse", {
        ...base(input.sessionID, "PostToolUse"), tool_name: input.tool, tool_use_id: input.callID,
        tool_input: input.args || {}, tool_response: output ? output.output : "", exit: meta.exit,
      });
    },
  };
};
