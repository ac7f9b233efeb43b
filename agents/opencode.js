// gatekeep for OpenCode: vets every shell command an agent runs, before it runs, and every file
// its own tools write, for the places no command may write either.
// Written by `gatekeep install --agent opencode`; `gatekeep install --agent opencode --remove` deletes it.
//
// OpenCode calls tool.execute.before before each tool call, and a hook that throws stops the
// call. This one asks `gatekeep agent-hook opencode` about each shell command and each call of a
// file tool, and throws unless the answer is an allow: also when gatekeep is missing, fails, or
// takes longer than TIMEOUT_MS (OpenCode puts no time limit on a plugin's hook). The hook cannot
// ask the user, so gatekeep answers deny for what it would ask about, with the rule that would
// allow it. An allow may carry `args` (a command run contained): they replace the call's own.
// It imports nothing but Node's own modules, so OpenCode has no package to install for it.
import { spawnSync } from "node:child_process";

const GATEKEEP = __GATEKEEP_ARGV__;
const TIMEOUT_MS = 30000;
// the shell tool (OpenCode 1.x calls it bash), and the tools that write files
const TOOLS = new Set(["bash", "shell", "write", "edit", "multiedit", "apply_patch", "patch"]);

function verdict(event) {
  const run = spawnSync(GATEKEEP[0], [...GATEKEEP.slice(1), "agent-hook", "opencode"], {
    input: JSON.stringify(event),
    encoding: "utf8",
    timeout: TIMEOUT_MS,
    maxBuffer: 1 << 20,
  });
  if (run.error || run.status === null) {
    return { refusal: `gatekeep could not run (${run.error ? run.error.message : run.signal}); blocked` };
  }
  let answer = null;
  try {
    answer = JSON.parse(run.stdout);
  } catch {
    answer = null;
  }
  if (run.status === 0 && answer !== null && answer.decision === "allow") {
    const args = answer.args && typeof answer.args === "object" ? answer.args : null;
    return { refusal: null, args };
  }
  const reason = (answer && answer.reason) || run.stderr || run.stdout || `gatekeep exited ${run.status}`;
  return { refusal: String(reason).trim() || "gatekeep: blocked" };
}

async function server({ directory }) {
  return {
    "tool.execute.before": async (input, output) => {
      if (!TOOLS.has(input.tool)) return;
      const event = {
        hook_event_name: "tool.execute.before",
        tool: input.tool,
        sessionID: input.sessionID,
        callID: input.callID,
        directory,
        args: (output && output.args) || {},
      };
      const { refusal, args } = verdict(event);
      if (refusal !== null) throw new Error(refusal);
      if (args !== null) Object.assign(output.args, args);
    },
  };
}

export default { id: "gatekeep", server };
