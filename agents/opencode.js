// gatekeep for OpenCode: vets every shell command an agent runs, before it runs.
// Written by `gatekeep install --agent opencode`; `gatekeep install --agent opencode --remove` deletes it.
//
// OpenCode calls tool.execute.before before each tool call, and a hook that throws stops the
// call. This one asks `gatekeep agent-hook opencode` about each shell command and throws unless
// the answer is an allow: also when gatekeep is missing, fails, or takes longer than TIMEOUT_MS
// (OpenCode puts no time limit on a plugin's hook). The hook cannot ask the user, so gatekeep
// answers deny for what it would ask about, with the rule that would allow it.
import { spawnSync } from "node:child_process";

const GATEKEEP = __GATEKEEP_ARGV__;
const TIMEOUT_MS = 30000;
const SHELL_TOOLS = new Set(["bash", "shell"]); // OpenCode 1.x calls its shell tool bash

function refusal(event) {
  const run = spawnSync(GATEKEEP[0], [...GATEKEEP.slice(1), "agent-hook", "opencode"], {
    input: JSON.stringify(event),
    encoding: "utf8",
    timeout: TIMEOUT_MS,
    maxBuffer: 1 << 20,
  });
  if (run.error || run.status === null) {
    return `gatekeep could not run (${run.error ? run.error.message : run.signal}); blocked`;
  }
  let answer = null;
  try {
    answer = JSON.parse(run.stdout);
  } catch {
    answer = null;
  }
  if (run.status === 0 && answer !== null && answer.decision === "allow") return null;
  const reason = (answer && answer.reason) || run.stderr || run.stdout || `gatekeep exited ${run.status}`;
  return String(reason).trim() || "gatekeep: blocked";
}

async function server({ directory }) {
  return {
    "tool.execute.before": async (input, output) => {
      if (!SHELL_TOOLS.has(input.tool)) return;
      const event = {
        hook_event_name: "tool.execute.before",
        tool: input.tool,
        sessionID: input.sessionID,
        callID: input.callID,
        directory,
        args: (output && output.args) || {},
      };
      const reason = refusal(event);
      if (reason !== null) throw new Error(reason);
    },
  };
}

export default { id: "gatekeep", server };
